"""Deliberate breaks of the chat memory on disk (issue 11): the store, the fold, the reopen, in
the model and in production. Each must be caught by ``pytest tests -k store`` (the store's
tests, the crash campaign, the optchat_store bridge, and the laws named store_*)."""

from spec.breaks import Break

AREA = "store"

BREAKS = [
    Break(
        "store_torn_marker_names_the_wrong_line",
        AREA,
        "eukhe.memory.daylog",
        "encode(Torn(tail.torn))",
        "encode(Torn(tail.torn + 1))",
        "the marker of a terminated torn tail names the line after it: the torn line is read as corrupt",
    ),
    Break(
        "store_only_the_last_line_is_torn",
        AREA,
        "eukhe.memory.daylog",
        "last_good = max(good + [marked])",
        "last_good = len(decoded) - 1 if decoded and isinstance(decoded[-1], str) else len(decoded)",
        "the defect the crash campaign found: a crash while terminating a torn tail leaves two bad lines",
    ),
    Break(
        "store_fold_forgets_open",
        AREA,
        "eukhe.memory.fold",
        "return view, bool(merges) and merges[-1].open",
        "return view, False",
        "F1 lost: a restart stops a shrinking view shrinking",
    ),
    Break(
        "store_model_fold_forgets_open",
        AREA,
        "bend.optchat.fold",
        "shrinking = batches[k].open",
        "shrinking = False",
        "F1 lost in the model: the law store_fold_is_live and the bridge catch it",
    ),
    Break(
        "store_key_logged_twice",
        AREA,
        "eukhe.memory.durable",
        "if key is not None and key in self.keys:",
        "if key is not None and key in self.keys and False:",
        "D2 lost: a retried append is logged twice",
    ),
    Break(
        "store_reopen_skips_the_gap_batch",
        AREA,
        "eukhe.memory.fold",
        "gap = shrinking and merges[-1].t < t",
        "gap = False",
        "D8 lost: a restart after a cut batch line of a shrinking view does not run the batch",
    ),
    Break(
        "store_unended_marker_ignored",
        AREA,
        "eukhe.memory.daylog",
        "decoded.append(last if isinstance(last, Torn) else \"the line has no newline: a torn write\")",
        "decoded.append(\"the line has no newline: a torn write\")",
        "found by store_torn_tail_is_skipped: a marker cut before its newline was ignored, the line it named read whole, and the next id made a gap",
    ),
    Break(
        "store_fast_path_trusts_kind",
        AREA,
        "eukhe.memory.records",
        "kind = _KINDS.get(name) if type(name) is str else None",
        "kind = _KINDS.get(name)",
        "found by store_lines_read_back: a kind of the wrong JSON type raised TypeError instead of refusing the line",
    ),
]
