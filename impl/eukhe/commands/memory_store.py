"""`eukhe memory` on the chat memory on disk (memory.md "Use": /memory, /memory view; the tools
zoom and date; rule 5 import):

    eukhe [--agent-dir D] memory                 status: mem N/128K, message and node counts
    eukhe memory view                            every view line, in <chat> ... </chat>
    eukhe memory zoom ID N                       zoom(ID, N): a line's two halves, or message ID whole
                                                 with its images (rule 53: one `image PATH` line each)
    eukhe memory date ID                         the date and time of message ID
    eukhe memory import [--session-dir S]        earlier sessions in as note messages

The chat is ``<agent dir>/chat/main``. The command claims the chat like any handle: with an
owner running it is a client of it, else it owns the chat while it runs. Bad input (a zoom that
names no node, an id past the chat, a --session-dir that does not exist or is empty) is one line
and exit 2; a log that cannot be read, an owner that does not answer, a sessions dir that is a
regular file is one line and exit 1 (the one error path of eukhe.cli: clipped, and a closed stdout
ends quietly). ``import`` reports the messages this run logged (an entry another import, running
at the same time, logged first counts as known), so the counts of runs at once add up to what
the chat holds. The verbs hang under the ``memory`` parser
of ``eukhe.commands.memory`` (one parser per command).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from eukhe import paths


def register(sub: Any) -> None:
    memory = sub.choices["memory"]
    verbs = memory.get_default("verbs")
    memory.set_defaults(run=_guarded(run_status))
    verbs.add_parser("view", help="every view line").set_defaults(run=_guarded(run_view))
    zoom = verbs.add_parser("zoom", help="zoom(id, n): open a view line, or a message whole (n = 1)")
    zoom.add_argument("id", type=_natural, help="the first message id of the line to open (a multiple of n)")
    zoom.add_argument("n", type=_natural, help="how many messages the line covers, a power of 2 (1: message ID whole)")
    zoom.set_defaults(run=_guarded(run_zoom))
    date = verbs.add_parser("date", help="the date and time of a message")
    date.add_argument("id", type=_natural, help="the message id whose date to show")
    date.set_defaults(run=_guarded(run_date))
    imports = verbs.add_parser("import", help="earlier sessions in as note messages, oldest first")
    imports.add_argument("--session-dir", help="the sessions dir (else EUKHE_SESSION_DIR, sessionDir, <agent dir>/sessions)")
    imports.set_defaults(run=_guarded(run_import))


def _natural(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants a whole number, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"wants a whole number >= 0, not {value}")
    return value


def _guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def guarded(args: argparse.Namespace) -> int:
        from eukhe.cli import EnvironmentFault, UsageError
        from eukhe.memory.chat import ZoomError
        from eukhe.memory.records import StoreError
        from eukhe.session import SessionError

        try:
            return run(args)
        except (ZoomError, ValueError) as error:
            raise UsageError(f"eukhe memory: {error}") from None
        except (StoreError, SessionError, OSError) as error:  # the one error path prints it (one line, clipped): exit 1
            raise EnvironmentFault(f"eukhe memory: {str(error).splitlines()[0] if str(error).strip() else type(error).__name__}") from None

    return guarded


def _memory(args: argparse.Namespace) -> Any:
    from eukhe.memory.owner import Memory
    from eukhe.memory.store import chat_dir

    return Memory(chat_dir(paths.agent_dir(args.agent_dir)))


def run_status(args: argparse.Namespace) -> int:
    from eukhe.memory.owner import status_line

    with _memory(args) as memory:
        status = memory.status()
        print(status_line(status))
        print(f"chat {status['directory']}  view.json at open: {status['saved_view']}  {'owner' if memory.is_owner else 'client of the owner'}")
    return 0


def run_view(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        print("<chat>")
        for line in memory.view():
            print(line)
        print("</chat>")
    return 0


def run_zoom(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        zoomed = memory.zoom(args.id, args.n)
        for line in zoomed:
            print(line)
        for path in zoomed.images:
            print(f"image {path}")
    return 0


def run_date(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        print(memory.date(args.id))
    return 0


def run_import(args: argparse.Namespace) -> int:
    from eukhe.cli import EnvironmentFault, UsageError, show_path
    from eukhe.commands.progress_bar import step, terminal_bar
    from eukhe.memory.importer import import_sessions
    from eukhe.session import Store as Sessions

    root, source = paths.resolve_session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    named = "--session-dir" if source == "--session-dir" else f"the sessions dir (from {source})"
    if root.exists() and not root.is_dir():
        raise EnvironmentFault(f"eukhe memory import: {named} {show_path(root)} is not a directory")
    if not root.exists() and source == "--session-dir":  # the flag names a dir to import: one that is not there is a mistake
        raise UsageError(f"eukhe memory import: {named} {show_path(root)} does not exist")
    with _memory(args) as memory, terminal_bar() as bar:  # on a terminal only
        done = import_sessions(memory, Sessions(root), step(bar, bar.add_task("import", total=None)))
    print(f"imported {done.added} messages from {done.sessions} sessions in {root} (from {source}); {done.known} entries already in the chat")
    return 0
