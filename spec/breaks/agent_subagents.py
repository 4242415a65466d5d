"""Named deliberate breaks of subagents in the turn loop (control.md S4 subagentMaxConcurrency; the
task tool and /agent): each must be caught by the loop bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_subagent_concurrency_ignored",
        "agent",
        "eukhe.agent.subagents",
        "                await self.changed.wait_for(lambda: self.running < max(1, self._limit()))",
        "                pass",
        "a child past subagentMaxConcurrency starts at once instead of waiting for a slot",
    ),
    Break(
        "agent_subagent_no_slots_ignored",
        "agent",
        "eukhe.agent.subagents",
        "        if self._limit() == 0:",
        "        if False:",
        "subagentMaxConcurrency 0 does not refuse a spawn: the child runs in one slot",
    ),
    Break(
        "agent_task_result_not_report",
        "agent",
        "eukhe.agent.subagents",
        "            return ToolResult(clip(outcome.text))",
        "            return ToolResult(\"the subagent has ended\")",
        "the task tool's result is not the child's report",
    ),
]
