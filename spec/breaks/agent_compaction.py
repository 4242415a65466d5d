"""Named deliberate breaks of session compaction in the turn loop (inference.md S6.6): each must be
caught by the loop bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_compaction_placed_mid_run",
        "agent",
        "eukhe.agent.compaction",
        "        if verdict != threshold.BLOCKING:\n            return None",
        "        if verdict != threshold.BLOCKING:\n            return self.take()",
        "a background compaction's summary is placed before the next request of the run, not at the next run boundary (S6.6)",
    ),
    Break(
        "agent_compaction_starts_while_queued",
        "agent",
        "eukhe.agent.compaction",
        "        if self.task is None and self.queued is None:",
        "        if self.task is None:",
        "a summary queued for the next run boundary does not stop a new background compaction (S6.6)",
    ),
    Break(
        "agent_compaction_limit_does_not_wait",
        "agent",
        "eukhe.agent.compaction",
        "        if self.task is not None:\n            await asyncio.shield(self.task)\n        return self.take()",
        "        return None",
        "a request over the limit goes out without waiting for the compaction and placing its summary (S6.6)",
    ),
    Break(
        "agent_compaction_forgets_placed_summary",
        "agent",
        "eukhe.agent.runner",
        "        before = () if placed is None else (Message(\"user\", SUMMARY_INTRO + placed),)",
        "        before = ()",
        "a new compaction summarizes the kept entries without the summary placed before them: the history it held is lost",
    ),
]
