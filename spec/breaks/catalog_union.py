"""Named deliberate breaks of the catalog union: each must be caught by a catalog_union law."""

from spec.breaks import Break

BREAKS = [
    Break(
        "catalog_union_fills_across_apis",
        "catalog_union",
        "bend.catalog_union",
        "    if bundled.api != compiled.api:\n        return bundled\n    fields",
        "    fields",
        "the compiled entry fills a bundled entry on another api",
    ),
    Break(
        "catalog_union_bundle_hides_compiled",
        "catalog_union",
        "bend.catalog_union",
        "    for j, (key, _api) in enumerate(compiled):\n        if key not in seen:",
        "    for j, (key, _api) in enumerate(compiled):\n        if key not in seen and False:",
        "the fast path drops the compiled-only models when a bundle is present",
    ),
    Break(
        "catalog_union_compiled_wins_optional",
        "catalog_union",
        "bend.catalog_union",
        "        present, value = field_of(bundled, name)\n        if present:",
        "        present, value = field_of(compiled, name)\n        if present:",
        "an optional field of the compiled entry replaces the bundled one",
    ),
    Break(
        "catalog_union_production_ignores_fill",
        "catalog_union",
        "eukhe.inference.catalog",
        "            out.append(_fill(entry, compiled_models[place.compiled]) if place.fill and place.compiled is not None else entry)",
        "            out.append(_fill(entry, compiled_models[place.compiled]) if place.compiled is not None else entry)",
        "production fills optional fields from a compiled entry on another api",
    ),
]
