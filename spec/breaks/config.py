"""Named deliberate breaks of the config area: each must be caught by a config law or the config
bridge (``EUKHE_BREAK=<name> pytest tests/laws tests/bridge -k config`` fails)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "config_writer_writes_over_broken",
        "config",
        "bend.config",
        "    doc = read(f)\n    if isinstance(doc, str):\n        return f, doc\n    return File(TEXT, apply(doc, change)), None",
        "    doc = read(f)\n    if isinstance(doc, str):\n        return File(TEXT, apply(Obj(()), change)), doc\n    return File(TEXT, apply(doc, change)), None",
        "a writer writes over a file that could not be read (the model)",
    ),
    Break(
        "config_setter_writes_loaded_copy",
        "config",
        "bend.config",
        "    after, error = rmw(disk, Change(path_of(cvar), value, False))",
        "    after, error = rmw(loaded, Change(path_of(cvar), value, False))",
        "a setter writes its loaded copy, not the document on disk",
    ),
    Break(
        "config_malformed_limit_fails_open",
        "config",
        "bend.config",
        "    if not isinstance(raw, Obj):\n        return 1",
        "    if not isinstance(raw, Obj):\n        return None",
        "a providerMaxInFlight that is not a map means no limit",
    ),
    Break(
        "config_untrusted_applies_limit",
        "config",
        "bend.config",
        '    for g in GUARDED_IDS:\n        if item == g or item.startswith(g + "."):\n            return True',
        '    for g in GUARDED_IDS[1:]:\n        if item == g or item.startswith(g + "."):\n            return True',
        "an untrusted project sets maxToolRounds",
    ),
    Break(
        "config_global_entry_wins",
        "config",
        "bend.config",
        "    for name, entry in project_entries.pairs:\n        out = put(out, name, entry)",
        "    for name, entry in project_entries.pairs:\n        out = out if get(out, name)[0] else put(out, name, entry)",
        "a project MCP entry does not replace the global entry of its name",
    ),
    Break(
        "config_production_writer_writes_over_broken",
        "config",
        "eukhe.settings.files",
        "    with locked(path):\n        document = read_document(path)\n        change(document)",
        "    with locked(path):\n        try:\n            document = read_document(path)\n        except DocumentError:\n            document = {}\n        change(document)",
        "production writers write over a broken document",
    ),
    Break(
        "config_production_setter_writes_loaded_copy",
        "config",
        "eukhe.settings.config",
        "        update_document(self.paths.global_settings, lambda doc: _put(doc, keys, value))\n        _put(self.loaded, keys, value)",
        "        _put(self.loaded, keys, value)\n        write_atomic(self.paths.global_settings, dumps_document(self.loaded))",
        "the production setter writes its loaded copy over the file",
    ),
    Break(
        "config_production_limit_fails_open",
        "config",
        "eukhe.settings.config",
        "    return entry if type(entry) is int and entry >= 0 else 1",
        "    return entry if type(entry) is int and entry >= 0 else None",
        "production: a malformed providerMaxInFlight entry means no limit",
    ),
    Break(
        "config_production_untrusted_applies_limit",
        "config",
        "eukhe.settings.config",
        "    return any(item == g or item.startswith(g + \".\") for g in GUARDED_IDS)",
        "    return any(item == g or item.startswith(g + \".\") for g in GUARDED_IDS if g != \"maxToolRounds\")",
        "production lets an untrusted project set maxToolRounds",
    ),
    Break(
        "config_production_bad_leaf_drops_document",
        "config",
        "eukhe.settings.config",
        "                if error is None:\n                    out.applied[path] = value\n                else:\n                    out.named.append((path, error))",
        "                if error is None:\n                    out.applied[path] = value\n                else:\n                    out.named.append((path, error))\n                    out.applied.clear()",
        "production: one bad leaf drops the leaves applied before it",
    ),
]
