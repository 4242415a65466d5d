"""Deliberate breaks of the goal progress check (S5.8): each must fail
``pytest tests/laws tests/bridge -k progress``."""

from spec.breaks import Break

BREAKS = [
    Break(
        "progress_count_not_reset_by_work",
        "progress",
        "eukhe.directors.progress",
        "    if work > record.work:\n        return StallCheck(StallRecord(run, goal, work, 0), CONTINUE, 0)\n",
        "    if work > record.work:\n        return StallCheck(StallRecord(run, goal, work, record.count), CONTINUE, record.count)\n",
        "production: the stall count not reset by new work (S5.8)",
    ),
    Break(
        "progress_pause_one_late",
        "progress",
        "bend.progress",
        "    if count >= cap:\n",
        "    if count > cap:\n",
        "model: the goal pauses one continuation after the cap (S5.8)",
    ),
    Break(
        "progress_result_is_no_work",
        "progress",
        "eukhe.directors.progress",
        'key = ("call", tool, canonical_args(args), result, bool(error))',
        'key = ("call", tool, canonical_args(args), "", bool(error))',
        "production: the result text left out of an act's key (S5.8)",
    ),
    Break(
        "progress_refused_note_is_work",
        "progress",
        "eukhe.directors.progress",
        "        if not accepted:\n            return False\n",
        "",
        "production: a progress note that was not accepted counts as work (S5.8)",
    ),
    Break(
        "progress_cap_zero_kept",
        "progress",
        "bend.progress",
        "    if stall_steps <= 0:\n",
        "    if stall_steps < 0:\n",
        "model: directors.stallSteps 0 is a cap of 0, not the default (S5.8)",
    ),
    Break(
        "progress_new_goal_keeps_count",
        "progress",
        "eukhe.directors.progress",
        "    if record is None or (record.run, record.goal) != (run, goal):\n",
        "    if record is None or record.run != run:\n",
        "production: a new goal of the same run keeps the old goal's count (S5.8)",
    ),
    Break(
        "progress_work_of_ignores_error_flag",
        "progress",
        "eukhe.directors.hooks",
        'str(content.get("text", "")), bool(content.get("is_error")))',
        'str(content.get("text", "")), False)',
        "production's reader of real transcripts (hooks.work_of) ignores a tool result's error flag (issue 9 defect b)",
    ),
]
