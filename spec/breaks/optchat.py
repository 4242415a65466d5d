"""Deliberate breaks of the optchat model and planner (memory.md "What is trusted": the seed's
list, then our own for the work queue and the compaction view). Each must be caught by
``pytest tests/laws tests/bridge -k optchat``."""

from spec.breaks import Break

AREA = "optchat"
MODEL_VIEW = "bend.optchat.view"
MODEL_CHAT = "bend.optchat.chat"

BREAKS = [
    # -- the seed's list --------------------------------------------------------------------
    Break(
        "optchat_due_from_first_model",
        AREA,
        MODEL_VIEW,
        "ea, eb = (a[1] + 2) << la, (b[1] + 2) << lb",
        "ea, eb = (a[1] << la) + 1, (b[1] << lb) + 1",
        "due from the pair's first message in the model: last_merges_8_9 and push_agrees fail",
    ),
    Break(
        "optchat_due_without_shift",
        AREA,
        MODEL_VIEW,
        "return ((t + 1) << lb) + (eb << la) > ((t + 1) << la) + (ea << lb)",
        "return (t << lb) + (eb << la) > (t << la) + (ea << lb)",
        "t for T + 1 in the cross comparison: push_agrees_always fails",
    ),
    Break(
        "optchat_due_levels_swapped",
        AREA,
        MODEL_VIEW,
        "return ((t + 1) << lb) + (eb << la) > ((t + 1) << la) + (ea << lb)",
        "return ((t + 1) << la) + (eb << lb) > ((t + 1) << lb) + (ea << la)",
        "pair levels swapped in the cross comparison: push_agrees_always fails",
    ),
    Break(
        "optchat_budget_push_plus_one",
        AREA,
        "bend.optchat.agree",
        "return len(entries)",
        "return len(entries) + 1",
        "budget = push length + 1: push_agrees_always fails",
    ),
    Break(
        "optchat_merge_unbuilt_parent",
        AREA,
        MODEL_VIEW,
        "return siblings(a, b) and built(parent(a)) is not None",
        "return siblings(a, b)",
        "mergeable without the built check: fit_merges_built fails",
    ),
    Break(
        "optchat_due_from_first_production",
        AREA,
        "eukhe.memory.core",
        "    tp: i64 = t + 1\n",
        "    tp: i64 = t\n",
        "due from first in production ((T - first) / 2^l): the bridge fails",
    ),
    Break(
        "optchat_batch_to_ceiling_production",
        AREA,
        "eukhe.memory.core",
        "self.sizes, self.total, self.floor, cbudget, self.scratch)",
        "self.sizes, self.total, self.ceiling, cbudget, self.scratch)",
        "production batch merging to the ceiling, not the floor: the bridge fails",
    ),
    Break(
        "optchat_ties_newest_first_production",
        AREA,
        "eukhe.memory.core",
        "    tie: i64 = 0  #",
        "    tie: i64 = -1  #",
        "production's fit breaks ties between equally due pairs newest first: the bridge and the core's differential test fail",
    ),
    # -- ours: the work queue -----------------------------------------------------------------
    Break(
        "optchat_window_nine_production",
        AREA,
        "eukhe.memory.chat",
        "if before >= WINDOW:",
        "if before > WINDOW:",
        "a message node starts with 8 unbuilt message lines before it: the bridge fails (queue columns)",
    ),
    Break(
        "optchat_wait_starts_merges_model",
        AREA,
        MODEL_CHAT,
        "    if not waiting:\n        for node in chat.merges:",
        "    if True:\n        for node in chat.merges:",
        "ready merges start while a turn waits: need_first fails",
    ),
    Break(
        "optchat_wait_keeps_calls_model",
        AREA,
        MODEL_CHAT,
        "running=tuple(n for n in chat.running if n[0] == 0),\n        merges=stopped + chat.merges,",
        "running=chat.running,\n        merges=chat.merges,",
        "calls for other nodes keep running when a turn starts waiting: need_first_running fails",
    ),
    Break(
        "optchat_fail_cap_four_model",
        AREA,
        MODEL_CHAT,
        "FAILURES = 3",
        "FAILURES = 4",
        "the fourth failure, not the third, builds from the input: fail_cap_builds fails",
    ),
    Break(
        "optchat_retry_never_production",
        AREA,
        "eukhe.memory.chat",
        "            self.retry.extend(self.failed)\n            self.failed.clear()\n            self.cases.add(\"retry_at_message\")",
        "            self.cases.add(\"retry_at_message\")",
        "failed nodes are not retried at the next message: the bridge fails",
    ),
    # -- ours: the compaction view --------------------------------------------------------------
    Break(
        "optchat_cview_no_refit_model",
        AREA,
        MODEL_CHAT,
        "    if chat.batch > 0:",
        "    if chat.batch > 10**9:",
        "the compaction view is not merged again when the chat view merges: the bridge fails",
    ),
    Break(
        "optchat_cview_no_refit_production",
        AREA,
        "eukhe.memory.core",
        "                if self.with_cview:\n                    self.ccodes = done.ccodes",
        "                if False:\n                    self.ccodes = done.ccodes",
        "production's compaction view skips its re-merge when the chat view merges: the bridge fails",
    ),
    Break(
        "optchat_context_past_node_model",
        AREA,
        MODEL_CHAT,
        "if last(line) > bound or text_of(chat, line) is None:",
        "if text_of(chat, line) is None:",
        "a compaction's view runs past its node: context_ends_at_node fails",
    ),
    Break(
        "optchat_context_unbuilt_production",
        AREA,
        "eukhe.memory.chat",
        "if last(line) > bound or not self.is_built(line):",
        "if last(line) > bound:",
        "production's compaction context holds unbuilt lines: the bridge fails (rendered contexts)",
    ),
    # -- the choice of the planner core's form (eukhe.memory.view.pick) -----------------------
    Break(
        "optchat_form_stale_core_accepted",
        AREA,
        "eukhe.memory.view",
        '    return found if getattr(found, "SOURCE", "") == source_digest() else None\n',
        "    return found\n",
        "a compiled core built from another source is taken as current: core_agrees_with_model fails (the form's choice)",
    ),
    Break(
        "optchat_form_compiled_missing_refused_as_unknown",
        AREA,
        "eukhe.memory.view",
        '    if form == "compiled":\n',
        '    if form == "compiled" and found is not None:\n',
        "EUKHE_MEMORY_FORM=compiled without a current build is refused as an unknown form: core_agrees_with_model fails",
    ),
    Break(
        "optchat_form_default_ignores_coverage",
        AREA,
        "eukhe.memory.view",
        '    if environ.get("EUKHE_BREAK") or environ.get("COVERAGE_RUN"):\n',
        '    if environ.get("EUKHE_BREAK"):\n',
        "the default form under a coverage run is the compiled core (untraced): core_agrees_with_model fails",
    ),
    Break(
        "optchat_form_default_always_pure",
        AREA,
        "eukhe.memory.view",
        "    return found if found is not None else pure\n",
        "    return pure\n",
        "the default form is the pure core even when a current compiled one is built: core_agrees_with_model fails",
    ),
]
