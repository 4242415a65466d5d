"""`eukhe tui` (and `eukhe` alone on a terminal): the full-screen client of a session's agent.

    eukhe [--agent-dir D] tui [--session ID | --new] [--session-dir S]

The session: ``--session ID`` (it must exist: `eukhe session list` shows them), ``--new`` (a new
one), else the session whose main conversation was written last, else a new one. The client
(``eukhe.tui``) reaches the session's agent, starting ``eukhe agent serve`` when none serves it.
It needs a terminal: with stdin or stdout not one, one line and exit 2. Exit 0 when the client
quits (an agent it cannot reach is an error row of the client's, naming why); 1 when the client
failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eukhe import paths
from eukhe.cli import UsageError


def register(sub: Any) -> None:
    p = sub.add_parser("tui", help="the full-screen client of a session's agent (the default on a terminal)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--session", help="the session's id (default: the session written last, else a new one)")
    which.add_argument("--new", action="store_true", help="a new session")
    p.add_argument("--session-dir", help="the sessions dir (else EUKHE_SESSION_DIR, the sessionDir setting, <agent dir>/sessions)")
    p.set_defaults(run=run_tui)


def newest(store: Any) -> str | None:
    """The session whose main conversation was written last, None when there is none."""
    from eukhe.session import MAIN

    ids: list[str] = store.ids()
    if not ids:
        return None
    return max(ids, key=lambda sid: ((store.path(sid) / f"{MAIN}.jsonl").stat().st_mtime_ns, sid))


def run_tui(args: argparse.Namespace) -> int:
    from eukhe.session import SessionNotFound, Store
    from eukhe.tui import app

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("eukhe tui: needs a terminal (stdin and stdout); for pipes use `eukhe agent serve`")
    agent = paths.agent_dir(args.agent_dir)
    sessions = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    store = Store(sessions)
    session_id = None if args.new else args.session or newest(store)
    if session_id is None:
        with store.create() as created:
            session_id = created.dir.name
    else:
        try:
            store.open(session_id, writer=False).close()
        except SessionNotFound as error:
            raise UsageError(f"eukhe tui: {error}") from None
    return app.run_tui(agent, store.path(session_id), session_id, Path.cwd())  # an agent it cannot reach: the app shows why

