"""`eukhe session`: make a session, list the sessions, show one, fork one, rewind one.

    eukhe [--agent-dir D] session [--session-dir S] new      prints the new session's id
    eukhe session list
    eukhe session show ID [--conversation NAME]     entries, documents at head, display rows marked
    eukhe session fork ID ENTRY [--conversation NAME]    prints the new session's id
    eukhe session rewind ID ENTRY [--conversation NAME]

The sessions dir comes from ``eukhe.paths.resolve_session_dir`` (S4b.7). Errors take the one
error path of ``eukhe.cli``: an unknown session, conversation or entry exits 2; a corrupt
record, a locked session, or a sessions dir that is a regular file exits 1.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from eukhe import paths
from eukhe.session import MAIN, Conversation, Entry, SessionError, Store

CONTENT_WIDTH = 72
SESSIONS_HELP = "the sessions dir (else EUKHE_SESSION_DIR, the sessionDir setting, <agent dir>/sessions)"
ID_HELP = "a session id (the name of its directory in the sessions dir; see `eukhe session list`)"
ENTRY_HELP = "an entry id of the conversation (a whole number; see `eukhe session show ID`)"
CONVERSATION_HELP = "the conversation: main (default) or a subagent's, such as main.reviewer"


def register(sub: Any) -> None:
    top = sub.add_parser("session", help="the session state tree: new, list, show, fork, rewind")
    top.add_argument("--session-dir", help=SESSIONS_HELP)
    actions = top.add_subparsers(dest="action", required=True, parser_class=type(top), metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--session-dir", default=argparse.SUPPRESS, help=SESSIONS_HELP)
    actions.add_parser("new", parents=[common], help="make a new empty session and print its id").set_defaults(run=run_new)
    actions.add_parser("list", parents=[common], help="the sessions of the sessions dir").set_defaults(run=run_list)
    show = actions.add_parser("show", parents=[common], help="entries and documents at head of a conversation")
    show.add_argument("id", help=ID_HELP)
    show.add_argument("--conversation", default=MAIN, help=CONVERSATION_HELP)
    show.set_defaults(run=run_show)
    for name, run, says in (("fork", run_fork, "a new session from an entry"), ("rewind", run_rewind, "move the head to an entry")):
        action = actions.add_parser(name, parents=[common], help=says)
        action.add_argument("id", help=ID_HELP)
        action.add_argument("entry", type=_entry_id, help=ENTRY_HELP)
        action.add_argument("--conversation", default=MAIN, help=CONVERSATION_HELP)
        action.set_defaults(run=run)


def _entry_id(text: str) -> int:
    body = text[1:] if text.startswith("-") else text
    if not (body.isascii() and body.isdigit()) or len(body) > 30:
        raise argparse.ArgumentTypeError(f"an entry id is a whole number of at most 30 digits, not {text[:40]!r}")
    return int(text)


def _store(args: argparse.Namespace) -> tuple[Store, str]:
    """The sessions dir; a path that exists and is not a directory is a fault of the environment."""
    from eukhe.cli import require_dir

    require_dir(paths.agent_dir(args.agent_dir), "the agent dir")
    root, source = paths.resolve_session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    require_dir(root, f"the sessions dir (from {source})")
    return Store(root), source


def run_new(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    with store.create() as session:
        print(session.id)
    return 0


def run_list(args: argparse.Namespace) -> int:
    store, source = _store(args)
    from eukhe.cli import EnvironmentFault

    print(f"sessions in {store.root} (from {source})")
    unreadable = []
    for session_id in store.ids():
        try:
            with store.open(session_id, writer=False) as session:
                main = session.conversation(MAIN)
                names = session.conversations()
                for name in names:
                    session.conversation(name)  # reads every log, so a corrupt one is named here
                print(f"{session_id}  entries {len(main.entries())}  head {main.head}  conversations {', '.join(names)}")
        except (SessionError, OSError) as error:
            print(f"{session_id}  error: {error}")
            unreadable.append(session_id)
    if unreadable:
        raise EnvironmentFault(f"{len(unreadable)} session(s) cannot be read: {', '.join(unreadable)} (see above)")
    return 0


def run_show(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    with store.open(args.id, writer=False) as session:
        conversation = session.conversation(args.conversation)
        print(_show(conversation, session.conversations()))
    return 0


def run_fork(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    with store.open(args.id, writer=False) as source:
        conversation = source.conversation(args.conversation)
        conversation.entry(args.entry)  # UnknownEntry names a missing entry before anything is made
        forked = conversation.fork(args.entry)
    print(forked)
    return 0


def run_rewind(args: argparse.Namespace) -> int:
    store, _ = _store(args)
    with store.open(args.id, writer=True) as session:
        session.conversation(args.conversation).rewind(args.entry)
    print(f"{args.id} {args.conversation}: head is now entry {args.entry}")
    return 0


def _show(conversation: Conversation, names: list[str]) -> str:
    head = conversation.head
    on_branch = {e.id for e in conversation.branch()}
    origin = conversation.origin
    lines = [f"session {conversation.session.id}  conversation {conversation.name}  head {head}"]
    if origin is not None:
        lines.append(f"forked from session {origin.session} conversation {origin.conversation} entry {origin.entry}")
    lines.append(f"conversations: {', '.join(names)}")
    lines.append("entries (* on the head's branch, > the head; [display-only] rows never reach the model):")
    for entry in conversation.entries():
        mark = ">" if entry.id == head else "*" if entry.id in on_branch else " "
        lines.append(f"{mark} {_entry_line(entry, sorted(conversation.changes(entry.id)))}")
    lines.append("documents at head:")
    documents = conversation.documents()
    for name in sorted(documents):
        lines.append(f"  {name} = {_json(documents[name], 200)}")
    if not documents:
        lines.append("  (none)")
    return "\n".join(lines)


def _entry_line(entry: Entry, sets: list[str]) -> str:
    kind = entry.kind.value + (f" {entry.custom_type}" if entry.custom_type else "")
    flags = " [display-only]" if entry.display_only else ""
    parent = "-" if entry.parent is None else str(entry.parent)
    text = f"{entry.id:>4} (parent {parent:>4})  {kind}{flags}"
    if entry.content is not None:
        text += f"  {_json(entry.content, CONTENT_WIDTH)}"
    if sets:
        text += f"  sets {', '.join(sets)}"
    return text


def _json(value: object, width: int) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."
