"""Reaching the agent of a session from a client (`eukhe tui`, `eukhe chat`).

The client never writes the session: the agent process does (memory.md rule 7, grown into the
agent; ``eukhe.agent.daemon``). ``reach`` connects to the agent's socket; when no agent listens
there it starts one, ``eukhe agent serve --session ID --idle-exit`` in a process of its own (a
new process group, so a signal to the client's terminal does not reach it, and it serves the
session's other clients while any is connected; it ends once every client has gone and nothing
runs), with the project as its working directory, and connects once it serves. A second client that starts one
at the same moment is no harm: one of them takes the session's lock, the other becomes a client
of it. The agent's stderr goes to ``<agent dir>/run/agent/<socket name>.log``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session.private import make_dirs

START_SECONDS: Final = 30.0  # how long a started agent has to serve its socket
POLL_SECONDS: Final = 0.02  # between two tries to connect to a starting agent


class AgentUnreachable(ConnectionError):
    """No agent serves the session, and the one started did not come up."""


def serve_command(agent_dir: Path, session_dir: Path, session: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "eukhe",
        "--agent-dir",
        str(agent_dir),
        "agent",
        "serve",
        "--session",
        session,
        "--session-dir",
        str(session_dir.parent),
        "--idle-exit",
    ]


async def reach(
    agent_dir: Path, session_dir: Path, session: str, project_dir: Path, *, start: bool = True
) -> tuple[AgentClient, subprocess.Popen[bytes] | None]:
    """A client of the session's agent, and the agent's process when this call started it (see
    the module docstring)."""
    address = p.socket_path(agent_dir, session_dir)
    try:
        return await AgentClient.connect(address), None
    except (ConnectionRefusedError, FileNotFoundError):
        if not start:
            raise AgentUnreachable(f"no agent serves session {session} at {address}") from None
    make_dirs(address.parent)
    log = address.parent / (address.name.removesuffix(".sock") + ".log")
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    fd = os.open(log, flags, 0o600)
    try:
        process = subprocess.Popen(
            serve_command(agent_dir, session_dir, session),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fd,
            cwd=project_dir,
            start_new_session=True,
        )
    finally:
        os.close(fd)
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            return await AgentClient.connect(address), process
        except (ConnectionRefusedError, FileNotFoundError):
            code = process.poll()
            if code is not None:
                raise AgentUnreachable(f"the agent of session {session} ended (exit {code}) before serving: see {log}") from None
            if time.monotonic() > deadline:
                raise AgentUnreachable(f"the agent of session {session} did not serve {address} within {START_SECONDS:g} s: see {log}") from None
            await asyncio.sleep(POLL_SECONDS)
