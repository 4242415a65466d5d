"""The agent dir and the sessions dir: one function each, called by every reader.

Agent dir: the ``--agent-dir`` flag, else ``EUKHE_AGENT_DIR``, else ``~/.eukhe``.

Sessions dir (control.md S4b.7, ``settings::resolve_session_dir``), first that is set wins:

1. the ``--session-dir`` flag;
2. ``EUKHE_SESSION_DIR``;
3. the legacy ``EUKHE_CODING_AGENT_SESSION_DIR``;
4. the ``sessionDir`` setting: the effective config value of the Global cvar ``sessionDir``
   (eukhe.settings, ``EukheSettings(agent dir, working dir).cvars``), so the global
   ``<agent dir>/settings.json`` or the global ``<agent dir>/config.cfg``, whichever wins by
   S4's order (the config.cfg is the later layer). A project file never sets a Global cvar
   (S4), trusted or not: its ``sessionDir`` is a settings error of the config;
5. ``<agent dir>/sessions``.

Unix socket addresses (``socket_address``): ``<dir>/<name>`` when its bytes fit the 107 a
socket address holds (the name counted, a temporary name as much as the socket's own), else the
same file reached through ``/proc/self/fd/N/<name>`` of the directory held open, whose length
does not depend on the directory's: a socket in the agent dir works whatever the dir's length.

An empty variable or an empty ``sessionDir`` counts as unset. ``~`` is expanded; a relative
path is taken from the working dir (flag, variables) or from the agent dir (the setting). The
config is read only when no higher level is set, and only read. A config file that cannot be
read or parsed, or whose ``sessionDir`` is not a string, gives no value (S4b.3: it is a
settings error, kept in ``Config.errors`` and shown by ``eukhe settings show``), so the next
level applies; this never raises.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

AGENT_DIR_ENV = "EUKHE_AGENT_DIR"
SESSION_DIR_ENV = "EUKHE_SESSION_DIR"
LEGACY_SESSION_DIR_ENV = "EUKHE_CODING_AGENT_SESSION_DIR"
SESSION_DIR_KEY = "sessionDir"
SOCKET_ADDRESS_MAX = 107  # bytes of a Unix socket address (Linux: sun_path is 108, its NUL included)


def agent_dir(flag: str | Path | None = None, *, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    env = os.environ if env is None else env
    here = Path.cwd() if cwd is None else cwd
    if flag:
        return _absolute(str(flag), here, env)
    if env.get(AGENT_DIR_ENV):
        return _absolute(env[AGENT_DIR_ENV], here, env)
    return _home(env) / ".eukhe"


def resolve_session_dir(
    flag: str | Path | None = None,
    *,
    agent_dir_flag: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Path, str]:
    """The sessions dir and the level it came from (``--session-dir``, the variable's name,
    the config layer's name such as ``global config.cfg``, or ``default``)."""
    env = os.environ if env is None else env
    here = Path.cwd() if cwd is None else cwd
    if flag:
        return _absolute(str(flag), here, env), "--session-dir"
    for name in (SESSION_DIR_ENV, LEGACY_SESSION_DIR_ENV):
        if env.get(name):
            return _absolute(env[name], here, env), name
    agent = agent_dir(agent_dir_flag, env=env, cwd=here)
    from eukhe.settings.agent import EukheSettings  # lazily: eukhe.settings may import eukhe.paths

    found = EukheSettings(agent, here).cvars.sourced([], SESSION_DIR_KEY)
    if found is not None and isinstance(found[0], str) and found[0]:
        return _absolute(found[0], agent, env), found[1]
    return agent / "sessions", "default"


def session_dir(
    flag: str | Path | None = None,
    *,
    agent_dir_flag: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Path:
    """The sessions dir by the precedence of S4b.7 (see the module docstring)."""
    return resolve_session_dir(flag, agent_dir_flag=agent_dir_flag, env=env, cwd=cwd)[0]


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _absolute(value: str, base: Path, env: Mapping[str, str]) -> Path:
    if value == "~" or value.startswith("~/"):
        return _home(env) / value[2:]
    path = Path(value)
    return path if path.is_absolute() else base / path


@contextmanager
def socket_address(directory: Path, name: str) -> Iterator[str]:
    """The address to bind or connect the Unix socket ``directory/name`` with, valid within the
    block: the path itself when its bytes fit SOCKET_ADDRESS_MAX, else ``/proc/self/fd/N/name``
    with ``directory`` open as N (the name must itself fit, with room for the prefix)."""
    full = os.path.join(os.fsdecode(directory), name)
    if len(os.fsencode(full)) <= SOCKET_ADDRESS_MAX:
        yield full
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{name}"
    finally:
        os.close(fd)
