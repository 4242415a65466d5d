"""Deliberate breaks of the agent process's requests: each must be caught by the daemon bridge
(``EUKHE_BREAK=<name> pytest tests/bridge/test_bridge.py -k "daemon and byte"``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_push_cap_off_by_one",
        "daemon",
        "eukhe.directors.hooks",
        "        if pushed >= self.limits.stack_cap:\n",
        "        if pushed > self.limits.stack_cap:\n",
        "production: /remind and /force push one layer past directors.stackCap (S5.6)",
    ),
    Break(
        "daemon_model_bare_id_takes_the_first",
        "daemon",
        "eukhe.agent.daemon",
        "            if len(matches) > 1:\n",
        "            if len(matches) > 2:\n",
        "production: /model ID that names models of two providers switches to the first one instead of refusing",
    ),
    Break(
        "daemon_turn_without_loop_says_idle",
        "daemon",
        "eukhe.agent.daemon",
        '            raise _Refused("no_loop", "turn loop not installed")\n',
        '            raise _Refused("idle", "turn loop not installed")\n',
        "production: an agent with no turn loop refuses a turn, steer, follow_up or abort as idle instead of no_loop",
    ),
    Break(
        "daemon_cvar_save_writes_every_cvar",
        "daemon",
        "eukhe.settings.cvar",
        "        return [(d.id, last[d.id]) for d in self.registry if d.persist and d.id in last]\n",
        "        return [(d.id, last[d.id]) for d in self.registry if d.id in last]\n",
        "production: cvar_save writes the session's sets of cvars that do not persist too (S4.6)",
    ),
    # The next two run only in the real agent process a scenario starts (``eukhe agent serve``):
    # the bridge gives that process a sitecustomize that installs the same break.
    Break(
        "daemon_turn_without_model_answered",
        "daemon",
        "eukhe.agent.runner",
        '"reason": FAILED, "text": str(error)',
        '"reason": "answered", "text": str(error)',
        "production (agent process): a turn of a session with no model ends answered instead of failed",
    ),
    Break(
        "daemon_memory_outside_chat_says_no_loop",
        "daemon",
        "eukhe.agent.daemon",
        '            raise _Refused("not_chat", str(error)) from None\n',
        '            raise _Refused("no_loop", str(error)) from None\n',
        "production (agent process): /memory in a session that is not the chat is refused no_loop instead of not_chat",
    ),
    Break(
        "daemon_abort_when_idle_says_busy",
        "daemon",
        "eukhe.agent.daemon",
        '                raise _Refused("idle", "no turn runs: nothing to abort")\n',
        '                raise _Refused("busy", "no turn runs: nothing to abort")\n',
        "production (agent process): abort with no turn running is refused busy instead of idle",
    ),
    Break(
        "daemon_protocol_takes_true_for_version_1",
        "daemon",
        "eukhe.agent.protocol",
        "    if type(version) is not int or version != PROTOCOL_VERSION:\n",
        "    if not isinstance(version, int) or version != PROTOCOL_VERSION:\n",
        'production: a line whose "v" is true (a boolean, equal to 1 in Python) is read as a request of version 1',
    ),
    Break(
        "daemon_subagent_name_takes_a_dot",
        "daemon",
        "eukhe.agent.subagents",
        'NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")',
        'NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")',
        "production (agent process): /agent takes a subagent name with a dot in it",
    ),
]
