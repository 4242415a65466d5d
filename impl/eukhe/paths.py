"""The agent dir and the sessions dir: one function each, called by every reader.

Agent dir: the ``--agent-dir`` flag, else ``EUKHE_AGENT_DIR``, else ``~/.eukhe``.

Sessions dir (control.md S4b.7, ``settings::resolve_session_dir``), first that is set wins:

1. the ``--session-dir`` flag;
2. ``EUKHE_SESSION_DIR``;
3. the legacy ``EUKHE_CODING_AGENT_SESSION_DIR``;
4. the ``sessionDir`` setting: the project ``.eukhe/settings.json`` (under the working dir),
   then the global ``<agent dir>/settings.json`` (S4: the config is the global settings.json,
   then the project one, and the later layer wins). S4b.5 does not list ``sessionDir`` among
   what an untrusted project is denied, so the project file applies;
5. ``<agent dir>/sessions``.

An empty variable counts as unset. ``~`` is expanded; a relative path is taken from the
working dir (flag, variables), from the project dir (project setting) or from the agent dir
(global setting). The settings files are read only when no higher level is set, and only
read: a missing file reads as empty; a file that cannot be read, is not a JSON object, or
whose ``sessionDir`` is not a non-empty string raises ``SettingsFileError`` naming the file.
The config.cfg layers of S4 carry no ``sessionDir`` here: they come with eukhe.settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

AGENT_DIR_ENV = "EUKHE_AGENT_DIR"
SESSION_DIR_ENV = "EUKHE_SESSION_DIR"
LEGACY_SESSION_DIR_ENV = "EUKHE_CODING_AGENT_SESSION_DIR"
SETTINGS_FILE = "settings.json"
PROJECT_DIR = ".eukhe"
SESSION_DIR_KEY = "sessionDir"


class SettingsFileError(Exception):
    """A settings.json that eukhe cannot use; it is never written over."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"settings error in {path}: {reason}")


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
    the settings file's path, or ``default``)."""
    env = os.environ if env is None else env
    here = Path.cwd() if cwd is None else cwd
    if flag:
        return _absolute(str(flag), here, env), "--session-dir"
    for name in (SESSION_DIR_ENV, LEGACY_SESSION_DIR_ENV):
        if env.get(name):
            return _absolute(env[name], here, env), name
    agent = agent_dir(agent_dir_flag, env=env, cwd=here)
    for settings, base in ((here / PROJECT_DIR / SETTINGS_FILE, here), (agent / SETTINGS_FILE, agent)):
        value = setting(settings, SESSION_DIR_KEY)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise SettingsFileError(settings, f"{SESSION_DIR_KEY} is {value!r}, not a path")
            return _absolute(value, base, env), str(settings)
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


def setting(path: Path, key: str) -> object:
    """The top-level ``key`` of the settings file at ``path`` (None when the file or the key
    is missing). Reads only."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SettingsFileError(path, f"cannot be read: {error.strerror or error}") from None
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise SettingsFileError(path, f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise SettingsFileError(path, "not a JSON object")
    return document.get(key)


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _absolute(value: str, base: Path, env: Mapping[str, str]) -> Path:
    if value == "~" or value.startswith("~/"):
        return _home(env) / value[2:]
    path = Path(value)
    return path if path.is_absolute() else base / path
