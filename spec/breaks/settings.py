"""Named deliberate breaks of the settings writers (issue 10 item 4: every config document is
written through ``eukhe.settings.files.write_atomic``; a cfg file that does not parse is never
written over). The regression tests of tests/settings/test_writers.py and
tests/cli/test_cli_settings.py catch each (``make mutants`` runs ``pytest tests -k settings``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "settings_cfg_writer_writes_over_unparsed",
        "settings",
        "eukhe.settings.cfg",
        "    if found is not None:\n        raise DocumentError(path, NOT_PARSED",
        "    if False:\n        raise DocumentError(path, NOT_PARSED",
        "`set --global`, a global toggle and `cvar save` write over a cfg file with a line that does not parse.",
    ),
    Break(
        "settings_write_drops_the_mode",
        "settings",
        "eukhe.settings.files",
        "os.fchmod(fd, NEW_FILE_MODE if private or old is None else stat.S_IMODE(old.st_mode))",
        "os.fchmod(fd, NEW_FILE_MODE)",
        "A write turns a 0664 config.cfg (or settings.json) into 0600.",
    ),
    Break(
        "settings_write_replaces_the_symlink",
        "settings",
        "eukhe.settings.files",
        "    path = target(path)\n    try:\n        old",
        "    try:\n        old",
        "A write replaces a symlinked settings.json by a plain file; the link's target keeps the old text.",
    ),
    Break(
        "settings_bom_is_text",
        "settings",
        "eukhe.settings.files",
        "    return text[1:] if text.startswith(BOM) else text",
        "    return text",
        "A UTF-8 BOM makes the first cfg line unknown and settings.json not JSON.",
    ),
    Break(
        "settings_auth_json_keeps_a_readable_mode",
        "settings",
        "eukhe.settings.config",
        "        update_document(self.path, lambda doc: _put(doc, [provider], credential), private=True)",
        "        update_document(self.path, lambda doc: _put(doc, [provider], credential))",
        "auth.json written by a credential set keeps a mode others can read (0664 stays 0664).",
    ),
    Break(
        "settings_write_gives_the_file_away",
        "settings",
        "eukhe.settings.files",
        "        if old is not None and not private:\n            _keep_owner(fd, old)",
        "        if False:\n            _keep_owner(fd, old)",
        "a settings file of another owner (written by root for them) becomes root's: its owner can no longer write it",
    ),
]
