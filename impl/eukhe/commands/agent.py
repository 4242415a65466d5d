"""`eukhe agent serve --session ID`: the agent process of a session, in the foreground.

    eukhe [--agent-dir D] agent serve --session ID [--session-dir S] [--idle-exit]

It serves the session's clients over its socket in the agent dir (``eukhe.agent.daemon``,
protocol ``eukhe.agent.protocol``); when another process serves the session already it is a
client of it. Either way it prints every event as a JSON line on stdout and sends each line of
stdin as a request. It ends on SIGTERM or SIGINT (a client also at the end of stdin), exit 0.
With ``--idle-exit`` (how a client such as ``eukhe tui`` starts the agent it needs) it relays
nothing: it serves until a client has come and every one has gone, no turn runs and no
background subagent is still to report, then ends; when another process serves the session
already, it ends at once.
Its turns run the turn loop (``eukhe.agent.runner``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eukhe import paths


def register(sub: Any) -> None:
    top = sub.add_parser("agent", help="the agent process of a session: its clients over a socket in the agent dir")
    verbs = top.add_subparsers(dest="verb", required=True, parser_class=type(top), metavar="VERB")
    serve = verbs.add_parser("serve", help="serve the session (or be a client of the process that serves it)")
    serve.add_argument("--session", required=True, help="the session's id in the sessions dir (see `eukhe session list`)")
    serve.add_argument("--session-dir", help="the sessions dir (else EUKHE_SESSION_DIR, the sessionDir setting, <agent dir>/sessions)")
    serve.add_argument(
        "--idle-exit", action="store_true",
        help="serve without a relay, and end once every client has gone and nothing runs (the agent a client started)",
    )  # fmt: skip
    serve.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from eukhe.agent import daemon
    from eukhe.agent.runner import runner_factory

    agent = paths.agent_dir(args.agent_dir)
    sessions = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    return daemon.main(agent, sessions, args.session, runner_factory, project_dir=Path.cwd(), source=sys.stdin, sink=sys.stdout, idle_exit=args.idle_exit)
