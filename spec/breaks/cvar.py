"""Named deliberate breaks of the cvar area: each must be caught by a cvar law or the cvar bridge
(``EUKHE_BREAK=<name> pytest tests/laws tests/bridge -k cvar`` fails)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "cvar_project_file_sets_global",
        "cvar",
        "bend.cvar",
        "        found, v = layer_value(reg, layer.sets, layer.project, cvar)",
        "        found, v = layer_value(reg, layer.sets, False, cvar)",
        "a project file sets a Global cvar (the model)",
    ),
    Break(
        "cvar_first_set_wins",
        "cvar",
        "bend.cvar",
        "        if s.id == cvar and check(reg, s, local_only) is None:\n            found = (True, s.value)",
        "        if s.id == cvar and check(reg, s, local_only) is None and not found[0]:\n            found = (True, s.value)",
        "the last valid set of a layer loses to the first",
    ),
    Break(
        "cvar_toggle_reads_own_sets",
        "cvar",
        "bend.cvar",
        "    return set_last(reg, family, Set(cvar, not value(reg, config, family, cvar)))",
        "    return set_last(reg, family, Set(cvar, not layer_value(reg, family[-1].sets if family else (), True, cvar)[1]))",
        "a toggle reads the agent's own sets only, not the values it inherits",
    ),
    Break(
        "cvar_global_toggle_reads_project",
        "cvar",
        "bend.cvar",
        "    return Set(cvar, not config_value(reg, config, cvar, True))",
        "    return Set(cvar, not config_value(reg, config, cvar, False))",
        "a global toggle flips the value the project files give, not the global layer's",
    ),
    Break(
        "cvar_alias_nest_one_deeper",
        "cvar",
        "bend.cvar",
        "    return _expand(aliases, commands, 0, len(names(aliases)) + 1)",
        "    return _expand(aliases, commands, 0, len(names(aliases)) + 2)",
        "an alias nest one level deeper than the table plus one is accepted",
    ),
    Break(
        "cvar_production_nest_one_deeper",
        "cvar",
        "eukhe.settings.cvar",
        "        limit = len(self.table) + 1",
        "        limit = len(self.table) + 2",
        "production accepts an alias nest one level too deep",
    ),
    Break(
        "cvar_production_project_sets_global",
        "cvar",
        "eukhe.settings.cvar",
        "                if self.check(cvar, value, layer.project) is None:",
        "                if self.check(cvar, value, False) is None:",
        "production lets a project file set a Global cvar",
    ),
    Break(
        "cvar_production_toggle_reads_config",
        "cvar",
        "eukhe.settings.cvar",
        "        return not self.value(family, cvar)",
        "        return not self.config_value(cvar)",
        "production toggles the config's value, not the agent's with what it inherits",
    ),
    Break(
        "cvar_production_last_bind_wins",
        "cvar",
        "eukhe.settings.cvar",
        "        self._first.setdefault(key, commands)",
        "        self._first[key] = commands",
        "production presses the last bind of a key, not the first",
    ),
]
