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
    Break(
        "agent_report_waits_for_turn_end",
        "agent",
        "eukhe.agent.loop",
        "        reported = self._commit_reports()\n        text = self._take(self._steering, STEERING_MODE_CVAR)",
        "        reported = False\n        text = self._take(self._steering, STEERING_MODE_CVAR)",
        "a report that comes while a turn runs does not join its run: it is kept only as the turn ends",
    ),
    Break(
        "agent_report_after_steer",
        "agent",
        "eukhe.agent.loop",
        "        reported = self._commit_reports()\n        text = self._take(self._steering, STEERING_MODE_CVAR)\n        if text is None:\n            return reported\n        self._commit([user(text)])",
        "        text = self._take(self._steering, STEERING_MODE_CVAR)\n        if text is None:\n            return self._commit_reports()\n        self._commit([user(text)])\n        self._commit_reports()",
        "a report joins after the steered message of the same join, not before it",
    ),
    Break(
        "agent_task_of_blanks_spawns",
        "agent",
        "eukhe.agent.subagents",
        "        if not task.strip():\n",
        "        if not task:\n",
        "a task call whose task is only blanks starts a child instead of being refused subagent_failed",
    ),
    Break(
        "agent_subagent_stall_told_as_failure",
        "agent",
        "eukhe.agent.subagents",
        "                    return Outcome(name, kind=STALLED, message=",
        "                    return Outcome(name, kind=FAILED, message=",
        "a child killed after subagentStallMs of silence is told as a child that failed, not one that stalled",
    ),
    Break(
        "agent_child_bad_spawn_exit_0",
        "agent",
        "eukhe.agent.child",
        '        print(f"eukhe.agent.child: the spawn line is not a JSON object: {error}", file=sys.stderr)\n        return 2',
        '        print(f"eukhe.agent.child: the spawn line is not a JSON object: {error}", file=sys.stderr)\n        return 0',
        "a child whose spawn line is not a JSON object ends with status 0, as if it had served",
    ),
    Break(
        "agent_child_outlives_its_parent",
        "agent",
        "eukhe.agent.child",
        '    if spawn.get("parent") is not None and os.getppid() != spawn["parent"]:',
        '    if spawn.get("parent") is not None and os.getppid() != spawn["parent"] and False:',
        "a child whose parent died before it asked to die with it runs on",
    ),
]
