"""Deliberate breaks of the chat served by an agent process, of ``get_model_catalog`` and of the
lines a client sends past the line limit or with no newline: each must be caught by the daemon
bridge (``EUKHE_BREAK=<name> pytest tests/bridge/test_bridge.py -k "daemon and byte"``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_chat_no_status_after_turn",
        "daemon",
        "eukhe.agent.daemon",
        "            if isinstance(runner, Remembers):\n",
        "            if False and isinstance(runner, Remembers):\n",
        "production: a turn of the chat ends without giving every client the chat's status",
    ),
    Break(
        "daemon_chat_view_unbracketed",
        "daemon",
        "eukhe.agent.chat",
        '            return "", ["<chat>", *self.memory.view(), "</chat>"]\n',
        '            return "", [*self.memory.view()]\n',
        "production: /memory view gives the view's lines without the <chat> and </chat> that hold them",
    ),
    Break(
        "daemon_chat_memory_model_takes_extra_words",
        "daemon",
        "eukhe.agent.chat",
        "        if len(words) > 2:\n",
        "        if len(words) > 3:\n",
        "production: /memory model PROVIDER/ID LEVEL EXTRA saves the role instead of refusing the line",
    ),
    Break(
        "daemon_chat_memory_thinking_not_saved",
        "daemon",
        "eukhe.agent.chat",
        "        if level is not None:\n",
        "        if level is None:\n",
        "production: /memory model PROVIDER/ID LEVEL saves the model but not memory.thinking",
    ),
    Break(
        "daemon_chat_compactor_not_restarted",
        "daemon",
        "eukhe.agent.runner",
        '        if words[:1] == ["model"] and len(words) > 1:\n',
        '        if words[:1] == ["model"] and len(words) > 2:\n',
        "production: /memory model PROVIDER/ID saves the role but the compactor stays on the old one (no memory row)",
    ),
    Break(
        "daemon_catalog_hides_off",
        "daemon",
        "eukhe.agent.daemon",
        "        thinking_levels=[] if offered is None else list(offered.offered()),\n",
        "        thinking_levels=[] if offered is None or not model.reasoning else list(offered.offered()),\n",
        "production: get_model_catalog gives a model that does not reason no level, where S10 offers it off",
    ),
    Break(
        "daemon_unended_long_line_dropped",
        "daemon",
        "eukhe.agent.daemon",
        "                    if rest is None or rest.strip():\n                        self._line(client, rest)\n",
        "                    if rest is not None and rest.strip():\n                        self._line(client, rest)\n",
        "production: a line past the limit that the end of the connection ends (no newline) goes unanswered, where too_long is due",
    ),
]
BREAKS.append(
    Break(
        "daemon_serve_blank_line_ends_input",
        "daemon",
        "eukhe.agent.daemon",
        "                if isinstance(line, _EndOfInput):\n",
        '                if isinstance(line, _EndOfInput) or line == b"":\n',
        "production (eukhe agent serve): a blank line on stdin is taken for its end, and no request after it is read",
    )
)
BREAKS.extend(
    [
        Break(
            "daemon_rewind_keeps_the_model",
            "daemon",
            "eukhe.agent.daemon",
            "        self._settle_model()\n",
            "        pass\n",
            "production: /rewind moves main's head but keeps the model and thinking level of the old head",
        ),
        Break(
            "daemon_rewind_tells_no_state",
            "daemon",
            "eukhe.agent.daemon",
            "        self.broadcast(self.state())\n",
            "        pass\n",
            "production: after /rewind the clients are not given the state as of the new head",
        ),
        Break(
            "daemon_model_of_a_compiled_provider_taken",
            "daemon",
            "eukhe.agent.daemon",
            "        if found is None and provider not in reg.custom_providers:\n",
            "        if found is None and provider not in reg.custom_providers and False:\n",
            "production: /model PROVIDER/ID of a compiled provider that has no such model switches to it",
        ),
    ]
)
BREAKS.append(
    Break(
        "daemon_chat_owned_elsewhere_turns_anyway",
        "daemon",
        "eukhe.agent.runner",
        "            if self.chat_error is not None:\n                raise NoUsableModel(self.chat_error)\n",
        "            if False:\n                raise NoUsableModel(self.chat_error)\n",
        "production: the chat's agent runs turns (here: fails them for want of a model) when another process owns the chat memory (rule 7)",
    )
)
BREAKS.append(
    Break(
        "daemon_rewind_forgets_the_saved_default",
        "daemon",
        "eukhe.agent.daemon",
        "        if self.model is None:  # unpinned as of the head: the saved default, when it can be honoured\n",
        "        if False:  # unpinned as of the head: the saved default, when it can be honoured\n",
        "production: a session rewound to before its /model has no model, where the saved default (S6) is due",
    )
)
