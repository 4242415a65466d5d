"""Named deliberate breaks of the agent process serving a real terminal, of a serve stopped while it
claims a held session, of the levels of a reasoning model of models.json with no thinkingLevelMap
(S10), and of a global config.cfg that does not parse (S4): each must be caught by the daemon
bridge's scenarios after the first 300 (``tty``, ``held``, ``free`` and ``broken``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_terminal_read_as_no_input",
        "daemon",
        "eukhe.agent.daemon",
        "    if fd is None:\n        lines.put_nowait(END_OF_INPUT)",
        "    if fd is None or terminal:\n        lines.put_nowait(END_OF_INPUT)",
        "eukhe agent serve whose stdin is a terminal reads none of it: no request typed there is answered",
    ),
    Break(
        "daemon_unmapped_reasoning_model_not_reasoning",
        "daemon",
        "eukhe.agent.daemon",
        '    if chosen is None and found.reasoning and found.source == "models.json":\n',
        '    if chosen is None and found.reasoning and found.source == "models.json":\n        return effort.CatalogModel(found.id, False, None)\n',
        "a reasoning model of models.json with no thinkingLevelMap is taken as one that does not reason (off alone), not offered the default ladder",
    ),
    Break(
        "daemon_stop_waits_out_the_claim",
        "daemon",
        "eukhe.agent.daemon",
        "    task.cancel()\n    with contextlib.suppress(asyncio.CancelledError):\n        role = await task",
        "    with contextlib.suppress(asyncio.CancelledError):\n        role = await task",
        "eukhe agent serve stopped while it claims a held session does not give up the claim: it waits out its time and fails AgentBusy",
    ),
    Break(
        "daemon_global_set_writes_over_broken_cfg",
        "daemon",
        "eukhe.settings.cfg",
        "    def change(text: str) -> str:\n        check_parses(path, text)\n        return rewrite(text, ids, pairs)",
        "    def change(text: str) -> str:\n        return rewrite(text, ids, pairs)",
        "/set --global writes over a global config.cfg that does not parse instead of refusing it (DocumentError, nothing written)",
    ),
    Break(
        "daemon_settings_error_not_shown_again",
        "daemon",
        "eukhe.agent.daemon",
        "            self.thinking.default = self._default_level()\n            self._show_settings_errors()\n",
        "            self.thinking.default = self._default_level()\n",
        "a settings error that a /rewind took out of main's view is not shown again by the next cvar line",
    ),
]
