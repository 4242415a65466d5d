"""Named deliberate breaks of the saved default model: each must be caught by a default_model law."""

from spec.breaks import Break

BREAKS = [
    Break(
        "default_unkeyed_substitutes",
        "default_model",
        "bend.default_model",
        "        return Resolved(None, Row(saved, NO_CREDENTIALS, None), DEFAULT_UNUSABLE)",
        "        return Resolved(startup(world), Row(saved, NO_CREDENTIALS, startup(world)), DEFAULT_UNUSABLE)",
        "a saved default without credentials is silently replaced by another provider's model",
    ),
    Break(
        "default_row_when_honoured",
        "default_model",
        "bend.default_model",
        "    return Resolved(saved, None, None)",
        "    return Resolved(saved, Row(saved, NOT_IN_CATALOG, saved), None)",
        "an honoured saved default still shows a row",
    ),
    Break(
        "default_enabled_models_ignored",
        "default_model",
        "bend.default_model",
        "    elif world.enabled is not None and saved not in world.enabled:",
        "    elif False:",
        "a saved default outside enabledModels is used",
    ),
    Break(
        "default_replacement_unusable",
        "default_model",
        "bend.default_model",
        "        if usable(world, key):\n            return key",
        "        if key in world.catalog:\n            return key",
        "the replacement is the first chain model in the catalog, even without credentials",
    ),
    Break(
        "default_models_json_bad_provider_drops_all",
        "default_model",
        "eukhe.inference.catalog",
        '            out.diagnostics.append(f"{where}: providers.{provider_id}{\'.\' + place if place else \'\'}: {first[\'msg\']} (provider dropped)")\n            continue',
        '            out.diagnostics.append(f"{where}: providers.{provider_id}{\'.\' + place if place else \'\'}: {first[\'msg\']} (provider dropped)")\n            return ModelsJson(diagnostics=out.diagnostics)',
        "one bad provider entry drops every custom provider of models.json",
    ),
]
