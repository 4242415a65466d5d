"""Named deliberate breaks of the turn loop's edges the loop bridge reaches from its scenarios after
the stalls: a reply's reasoning streamed, a child that dies before it reports, a child whose
agents/NAME.cfg does not parse, a child and a turn of a model with no credentials, /rewind while a
turn or a background child runs, the agent stopped while a turn runs, a file past the tools' read
limit, a turn aborted while its request waits for a providerMaxInFlight slot, steer, follow_up and
abort sent as a turn starts (before its run has begun), and a Director stack document that stops
parsing while a turn runs. Each must be caught by the loop bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_thinking_not_streamed",
        "agent",
        "eukhe.agent.loop",
        '                    self.emit({"type": "thinking", "text": event.text})',
        "                    pass",
        "a reply's reasoning is read but never streamed to the agent's clients as thinking events",
    ),
    Break(
        "agent_dead_child_reports_nothing",
        "agent",
        "eukhe.agent.subagents",
        '                    return Outcome(name, kind=FAILED, message=f"subagent {name} ended (exit {code}) without a report")',
        '                    return Outcome(name, report="")',
        "a child whose process died before it reported is taken as one that reported nothing, not as a failure",
    ),
    Break(
        "agent_child_settings_error_hidden",
        "agent",
        "eukhe.agent.child",
        '        emit({"type": "row", "kind": "settings_error", "text": error.show()})',
        "        pass",
        "a child whose agents/NAME.cfg does not parse runs without that file's sets and says nothing of it",
    ),
    Break(
        "agent_child_no_model_unexplained",
        "agent",
        "eukhe.agent.child",
        '        pipe.send({"done": {"reason": FAILED, "text": str(error), "report": ""}})',
        '        pipe.send({"done": {"reason": FAILED, "text": "", "report": ""}})',
        "a child whose model cannot be resolved ends without saying why",
    ),
    Break(
        "agent_rewind_while_turn_runs",
        "agent",
        "eukhe.agent.daemon",
        '            raise _Refused("busy", "a turn runs: /rewind once it has ended (or abort it)")',
        "            pass",
        "/rewind moves the head of main while a turn runs (its lines land on the old branch)",
    ),
    Break(
        "agent_rewind_while_child_runs",
        "agent",
        "eukhe.agent.daemon",
        "        if self._jobs():  # its report would land on the rewound branch",
        "        if False:",
        "/rewind moves the head of main while a background subagent runs (its report lands on the rewound branch)",
    ),
    Break(
        "agent_stop_leaves_turn_running",
        "agent",
        "eukhe.agent.daemon",
        "        task = self.task\n        if task is not None:\n            assert self.runner is not None",
        "        task = self.task\n        if False:\n            assert self.runner is not None",
        "the agent ends while a turn runs without aborting it: the turn goes on against a closed session",
    ),
    Break(
        "agent_edit_too_large_told_binary",
        "agent",
        "eukhe.agent.tools.files",
        '        raise ToolError(TOO_LARGE, f"{path} is over {MAX_READ_BYTES} bytes")',
        '        raise ToolError(BINARY_FILE, f"{path} is over {MAX_READ_BYTES} bytes")',
        "an edit of a file past the tools' read limit is refused as a binary file, not as one too large",
    ),
    Break(
        "agent_slot_wait_survives_abort",
        "agent",
        "eukhe.agent.inflight",
        "            waiting.add_done_callback(lambda _: os.close(fd))\n            raise",
        "            waiting.add_done_callback(lambda _: os.close(fd))\n            return index, fd",
        "a turn aborted while its request waits for a slot sends the request all the same, holding no slot",
    ),
    Break(
        "agent_abort_as_turn_starts_ignored",
        "agent",
        "eukhe.agent.runner",
        "        if self._aborted_early:  # aborted before it began: the turn ends there, with what was sent into it",
        "        if False:",
        "an abort sent as a turn starts (before its run has begun) is answered ok, and the turn runs all the same",
    ),
    Break(
        "agent_messages_as_turn_starts_dropped",
        "agent",
        "eukhe.agent.runner",
        "            for send, message in early:\n                send(self._agent, message)",
        "            for send, message in early:\n                pass",
        "a message steered or queued as a turn starts (before its run has begun) is answered ok, then lost",
    ),
    Break(
        "agent_turn_failure_untold",
        "agent",
        "eukhe.agent.daemon",
        '            self.broadcast(p.ErrorEvent(kind="turn_failed", message=f"the turn ended with an error: {failure}"))',
        "            pass",
        "a turn whose loop fails (main's Director stack document no longer parses) ends failed without telling the clients why",
    ),
]
