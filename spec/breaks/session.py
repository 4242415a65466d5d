"""Deliberate breaks of the session store (impl/eukhe/session); the session laws catch each."""

from spec.breaks import Break

BREAKS = [
    Break(
        "session_rewind_keeps_documents",
        "session",
        "eukhe.session.tree",
        "            self._docs = self._docs_at(record.head)\n",
        "",
        "A branch move keeps the documents of the old head instead of reading them as of the new one.",
    ),
    Break(
        "session_display_rows_reach_the_model",
        "session",
        "eukhe.session.entries",
        "return self.kind is not Kind.STATE and not self.display_only",
        "return self.kind is not Kind.STATE",
        "The model view keeps display-only rows (eukhe.settings_error, eukhe.director).",
    ),
    Break(
        "session_fork_drops_document_history",
        "session",
        "eukhe.session.tree",
        "stored = tuple(Stored(self._entries[i], copy.deepcopy(self._changes.get(i, {}))) for i in path)",
        "stored = tuple(Stored(self._entries[i], copy.deepcopy(self._changes.get(entry_id, {}))) for i in path)",
        "A fork copies the path but only the fork entry's own document values, not every document as of it.",
    ),
    Break(
        "session_torn_tail_not_terminated",
        "session",
        "eukhe.session.log",
        'self._write((b"" if tail.terminated else b"\\n") + encode(Torn(tail.first, tail.last)))',
        "self._write(encode(Torn(tail.first, tail.last)))",
        "A writer appends after a torn last line without ending it, so its next record is glued to the torn bytes.",
    ),
    Break(
        "session_second_writer_admitted",
        "session",
        "eukhe.session.lock",
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        "fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)",
        "The writer lock is shared, so a second writer opens the session.",
    ),
    Break(
        "session_middle_garbage_skipped",
        "session",
        "eukhe.session.log",
        "            raise CorruptRecord(path, index + 1, str(item))\n",
        "            continue\n",
        "A bad record in the middle of a log is skipped in silence instead of named.",
    ),
    Break(
        "session_fork_unknown_entry_untyped",
        "session",
        "eukhe.session.tree",
        "        self.entry(entry_id)  # an unknown entry is UnknownEntry, not a KeyError\n",
        "",
        "A fork of an entry the tree does not hold raises a bare KeyError instead of UnknownEntry (found by session_refuses_bad_input).",
    ),
    Break(
        "session_empty_id_gets_a_new_one",
        "session",
        "eukhe.session.store",
        "session_dir = self.path(new_session_id() if session_id is None else session_id)",
        "session_dir = self.path(session_id or new_session_id())",
        "create('') makes a session under a new id instead of refusing the empty id (found by session_refuses_bad_input).",
    ),
    Break(
        "session_display_only_one_is_true",
        "session",
        "eukhe.session.records",
        "or not isinstance(display_only, bool):",
        "or display_only not in (True, False):",
        "A record whose display_only is the number 1 (1 == True in Python) reads as a display-only row instead of a corrupt record (found by session_corrupt_record_named).",
    ),
]
