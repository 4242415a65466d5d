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
        "eukhe.memory.index",
        "last_good = max(found.last_record, marked)",
        "last_good = found.lines - 1 if found.lines in found.bad else found.lines",
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
        "gap = shrinking and built.merges[-1].t < t",
        "gap = False",
        "D8 lost: a restart after a cut batch line of a shrinking view does not run the batch",
    ),
    Break(
        "store_unended_marker_ignored",
        AREA,
        "eukhe.memory.index",
        "        if isinstance(record, Torn):\n            self.found.markers[number] = record",
        "        if isinstance(record, Torn) and ended:\n            self.found.markers[number] = record",
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
    Break(
        "store_markers_found_late",
        AREA,
        "eukhe.memory.index",
        "    if not _may_mark(path):\n        return",
        "    if not _may_mark(path) or True:\n        return",
        "found by store_torn_tail_is_skipped on the lazy scan: a marker met only after the whole line it skips was taken, then the next id made a gap",
    ),
    Break(
        "store_scan_huge_node_index",
        AREA,
        "eukhe.memory.index",
        "if record.node[0] > 62 or record.node[1] >= t:",
        "if record.node[0] > 62:",
        "found by store_lines_read_back on the lazy scan: a node line naming an index past int64 crashed the scan (OverflowError)",
    ),
    Break(
        "store_scan_misses_an_id_gap",
        AREA,
        "eukhe.memory.index",
        "wrong = np.flatnonzero(ids != np.arange(count, count + len(ids)))",
        "wrong = np.flatnonzero(ids < 0)",
        "rule 2 lost on the lazy scan: a gap in message ids is read as if the ids ran on",
    ),
    Break(
        "store_scan_misses_a_node_logged_twice",
        AREA,
        "eukhe.memory.index",
        "                if len(later):\n",
        "                if len(later) and False:\n",
        "rule 13 lost on the lazy scan: a node logged twice is taken, its later line silently",
    ),
    Break(
        "store_text_read_short",
        AREA,
        "eukhe.memory.index",
        "return self.files[number], data[:end]",
        "return self.files[number], data[: max(0, end - 1)]",
        "a line read from disk by its place loses its last byte: texts read on demand differ from the log",
    ),
]
