"""Named deliberate breaks of the turn loop: each must be caught by the loop bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_first_forced_request_native",
        "agent",
        "eukhe.agent.loop",
        "compiled.flag(attempt, supported, False)",
        "compiled.flag(attempt, supported, True)",
        "the first forced request sets native forced choice though it is not free (S6.3)",
    ),
    Break(
        "agent_notes_one_short",
        "agent",
        "eukhe.agent.loop",
        "MAX_NOTES = 8",
        "MAX_NOTES = 7",
        "a generation gets 7 noted retries, not MAX_NOTES (8) (S6.5)",
    ),
    Break(
        "agent_forced_miss_kept",
        "agent",
        "eukhe.agent.loop",
        "                if again:\n                    note = None\n                    continue",
        "                if again and False:\n                    note = None\n                    continue",
        "a response to a forced request without the call is kept rather than sent again (S5.4)",
    ),
    Break(
        "agent_model_autonomous_past_limit",
        "agent",
        "bend.agent",
        "        if auto.used >= auto.max:",
        "        if auto.used > auto.max:",
        "the model's autonomous run continues once past autonomous.maxContinuations (S5.4)",
    ),
    Break(
        "agent_results_not_sent",
        "agent",
        "eukhe.agent.loop",
        "        out.extend(results)",
        "        pass",
        "the tool results are logged but never sent back: the next request has the calls without their results",
    ),
    Break(
        "agent_reply_split_per_call",
        "agent",
        "eukhe.agent.loop",
        "            calls.append(events.ToolCall(len(calls), str(content.get(\"id\")), str(content.get(\"name\")), raw, signature))",
        "            flush()\n            calls.append(events.ToolCall(0, str(content.get(\"id\")), str(content.get(\"name\")), raw, signature))",
        "a reply's calls are sent as one assistant message each, not as the one reply the model gave",
    ),
    Break(
        "agent_refusal_sent_again",
        "agent",
        "eukhe.agent.loop",
        "            if streamed.stop == events.REFUSAL:",
        "            if streamed.stop == events.REFUSAL and False:",
        "a refusal is taken as no answer and sent again with notes, rather than ending the run (refused)",
    ),
    Break(
        "agent_steering_mode_ignored",
        "agent",
        "eukhe.agent.loop",
        '        taken = waiting[:] if self.value(mode_cvar) == "all" else waiting[:1]',
        "        taken = waiting[:1]",
        "steeringMode and followUpMode all are ignored: waiting messages join or run one at a time",
    ),
    Break(
        "agent_answer_ends_before_steering",
        "agent",
        "eukhe.agent.loop",
        "                if not self._join_steering():",
        "                if True:",
        "a message steered as the answer ended does not join: the run ends, and it runs next as a turn of its own",
    ),
]
