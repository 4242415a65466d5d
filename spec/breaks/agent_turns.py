"""Deliberate breaks of what a client sends while a turn runs (a second turn, an abort) and of the
bash tool's budget and clipped output: each must be caught by the loop bridge
(``EUKHE_BREAK=<name> pytest tests/bridge/test_bridge.py -k "agent and byte"``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_abort_does_not_cancel",
        "agent",
        "eukhe.agent.loop",
        "            self._task.cancel()\n",
        "            pass\n",
        "production: abort while a request runs lets the run go on to its end instead of ending it aborted",
    ),
    Break(
        "agent_second_turn_refused_idle",
        "agent",
        "eukhe.agent.daemon",
        '            raise _Refused("busy", "a turn runs: send steer to join it, or follow_up to run after it")\n',
        '            raise _Refused("idle", "a turn runs: send steer to join it, or follow_up to run after it")\n',
        "production: a turn sent while one runs is refused idle instead of busy",
    ),
    Break(
        "agent_bash_timeout_past_the_budget",
        "agent",
        "eukhe.agent.tools.bash",
        "timeout_ms = context.bash_timeout_ms if asked is None else min(int(asked), context.bash_timeout_ms)",
        "timeout_ms = context.bash_timeout_ms if asked is None else int(asked)",
        "production: a bash call's timeout_ms past toolBlockingBudgetMs is taken as asked (S4b.5: the budget holds)",
    ),
    Break(
        "agent_bash_tail_of_the_last_chunk",
        "agent",
        "eukhe.agent.tools.bash",
        "            self.tail = (self.tail + text)[-self.keep :]\n",
        "            self.tail = text[-self.keep :]\n",
        "production: a long bash output keeps as its tail only the last chunk read, not its last characters",
    ),
    Break(
        "agent_bash_result_past_the_cap",
        "agent",
        "eukhe.agent.tools.bash",
        "    text = output.text(CAP - len(status) - 1)\n",
        "    text = output.text(CAP - len(status))\n",
        "production: a clipped bash result with its status line is one character past memory.md rule 9's cap",
    ),
]
BREAKS.extend(
    [
        Break(
            "agent_title_renames_a_named_session",
            "agent",
            "eukhe.agent.runner",
            "self.main.parent is not None or self.main.document(TITLE_DOC) is not None:",
            "self.main.parent is not None:",
            "production: a session its user named is titled all the same (S9: user names kept)",
        ),
        Break(
            "agent_title_keeps_a_capital_label",
            "agent",
            "eukhe.tiny.uses",
            '    if line.lower().startswith("title:"):\n',
            '    if line.startswith("title:"):\n',
            "production: a title reply written 'Title: ...' keeps its label in the title",
        ),
    ]
)
BREAKS.append(
    Break(
        "agent_full_provider_sends_anyway",
        "agent",
        "eukhe.agent.inflight",
        "            await asyncio.shield(waiting)\n",
        "            pass\n",
        "production: a request of a provider whose providerMaxInFlight slots are all held is sent without waiting for one (S4b.4)",
    )
)
