"""The durable session state tree (state tree S1, derived from control.md S4 and S5.8).

A session is a directory ``<sessions dir>/<id>/`` (the sessions dir comes from
``eukhe.paths.session_dir``, the one precedence of S4b.7). It holds one append-only log per
conversation: ``main.jsonl`` and its family of subagent conversations ``main.<child>.jsonl``
(names ``main.reviewer``, ``main.reviewer.grep``; ``Conversation.parent`` gives the parent).
Each log line is one record; each commit is one record, written whole and fsynced before
``commit`` returns. A conversation is a tree of entries with a head; documents are named
JSON values per conversation, and a document reads as of the head. ``writer.lock`` holds
the one-writer lock.

API (everything other areas need)::

    from eukhe.session import Store, user, display, row
    from eukhe.paths import session_dir

    store = Store(session_dir(args.session_dir, agent_dir_flag=args.agent_dir))
    with store.create() as session:                  # or store.open(id, writer=True)
        main = session.conversation("main")          # or "main.<child>" for a subagent
        ids = main.commit([user("hi")], {"eukhe.cvar.agent": {"sets": []}})
        main.commit([display("eukhe.director", "goal paused")])   # user sees it, model does not
        main.commit(documents={"eukhe.directors": []})           # documents alone: a state entry
        main.document("eukhe.cvar.agent")            # the value as of the head (a copy)
        main.documents_at(ids[0])                    # every document as of an entry
        main.model_view(); main.user_view()          # the head's branch, without/with display rows
        main.rewind(ids[0])                          # branch move: head and documents as of ids[0]
        forked_id = main.fork(ids[0])                # a new session from that entry
    store.open(forked_id, writer=False)              # readers take no lock

- ``commit(entries, documents)`` appends the entries as a chain after the head, puts the
  document values on the last one, writes one fsynced record, and returns the new ids
  (the last is the new head). Entry ids are whole numbers, increasing, per conversation.
- ``rewind(entry)`` moves the head to any entry of the tree: nothing is deleted, and the
  next commit starts a new branch there. ``fork(entry)`` makes a new session whose main
  conversation is the branch up to the entry, every document as of each of its entries.
- A resume (``store.open``) gives exactly the state before the close, head included.
- Errors (``eukhe.session.errors``): ``SessionLocked`` (a second writer; names the holder),
  ``CorruptRecord`` (names the file and the record; nothing is written), ``SessionNotFound``,
  ``SessionExists``, ``UnknownConversation``, ``UnknownEntry``, ``InvalidCommit``,
  ``ReadOnly``; all are ``SessionError``.
- Crashes: a torn last record (a write cut by a crash) is skipped, and the next writer
  terminates it and marks it (a ``torn`` record) so its own records start on a new line.
"""

from eukhe.session.entries import (
    Entry,
    EntryId,
    Json,
    Kind,
    NewEntry,
    assistant,
    display,
    row,
    tool_call,
    tool_result,
    user,
)
from eukhe.session.errors import (
    CorruptRecord,
    InvalidCommit,
    ReadOnly,
    SessionError,
    SessionExists,
    SessionLocked,
    SessionNotFound,
    UnknownConversation,
    UnknownEntry,
)
from eukhe.session.records import Origin
from eukhe.session.store import MAIN, Conversation, Session, Store

__all__ = [
    "MAIN",
    "Conversation",
    "CorruptRecord",
    "Entry",
    "EntryId",
    "InvalidCommit",
    "Json",
    "Kind",
    "NewEntry",
    "Origin",
    "ReadOnly",
    "Session",
    "SessionError",
    "SessionExists",
    "SessionLocked",
    "SessionNotFound",
    "Store",
    "UnknownConversation",
    "UnknownEntry",
    "assistant",
    "display",
    "row",
    "tool_call",
    "tool_result",
    "user",
]
