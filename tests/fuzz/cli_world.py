"""The world of a CLI run for the fuzzers: a temporary dir with an agent dir in a drawn state
(missing, a regular file, under a file, read-only, corrupt documents, torn and corrupt logs, a
locked session), the environment that points eukhe at it, and the judge of its documents
before and after a command (what reads, and what was written over)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from eukhe.session import Store, user
from eukhe.settings import files
from eukhe.settings.cfg import read_cfg
from eukhe.settings.cvar import Cvars
from eukhe.settings.cvar_table import registry

STATES = ("missing", "empty", "populated", "file", "under-file", "read-only", "corrupt-settings", "torn-log", "corrupt-log",
          "sessions-file", "locked")


def check(status: int, err: str, argv: list[str]) -> None:
    """The front door's promise: exit 0, 1 or 2; no traceback; a failure is one line."""
    assert status in (0, 1, 2), f"exit {status} for {argv!r}: {err!r}"
    assert "Traceback" not in err, f"a traceback for {argv!r}: {err}"
    if status != 0:
        assert len(err.splitlines()) == 1, f"not one line for {argv!r}: {err!r}"


def _chattr(flag: str, path: Path) -> bool:
    tool = shutil.which("chattr")
    return tool is not None and subprocess.run([tool, flag, str(path)], capture_output=True, check=False).returncode == 0


@dataclass
class World:
    tmp: Path
    agent: Path
    frozen: list[Path]

    def fill(self, text: str) -> str:
        return text.replace("{tmp}", str(self.tmp)).replace("{agent}", str(self.agent))


def _populate(agent: Path) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(agent / "settings.json", json.dumps({"mcpServers": {"git": {"command": "g"}}, "retry": {"maxRetries": 4}}) + "\n")
    files.write_atomic(agent / "config.cfg", "set defaultModel m\nset retry.enabled false\n")
    with Store(agent / "sessions").create("s1") as session:
        main = session.conversation()
        main.commit([user("hello"), user("again")], {"eukhe.cvar.agent": {"sets": [], "aliases": []}})
        session.conversation("main.worker").commit([user("sub")])
    with Store(agent / "sessions").create("s2") as session:
        session.conversation().commit([user("other")])


_TEMPLATE: list[Path] = []


def _template() -> Path:
    """One populated agent dir per test process, made by eukhe itself; each world copies it."""
    if not _TEMPLATE:
        root = Path(tempfile.mkdtemp(prefix="eukhe-fuzz-template-"))
        _populate(root / "agent")
        _TEMPLATE.append(root / "agent")
    return _TEMPLATE[0]


@contextlib.contextmanager
def world(state: str, script: bytes, *, freeze_spare: bool = True) -> Iterator[World]:
    """A temporary dir with the agent dir in ``state``; ``{tmp}/read-only`` is made immutable
    only when ``freeze_spare`` (it costs a chattr)."""
    with tempfile.TemporaryDirectory(prefix="eukhe-fuzz-") as name:
        tmp = Path(name)
        agent = tmp / "agent"
        here = World(tmp, agent, [])
        (tmp / "a-file").write_text("a regular file\n")
        (tmp / "dir.png").mkdir()
        (tmp / "script.jsonl").write_bytes(script)
        (tmp / "read-only").mkdir()
        if state == "empty":
            agent.mkdir()
        elif state != "missing":
            shutil.copytree(_template(), agent)
        if state == "file":
            shutil.rmtree(agent)
            agent.write_text("not a dir\n")
        elif state == "under-file":
            shutil.rmtree(agent)
            here.agent = tmp / "a-file" / "agent"
        elif state == "corrupt-settings":
            (agent / "settings.json").write_bytes(b'{"mcpServers": {"git": ')
        elif state == "torn-log":
            with open(agent / "sessions" / "s1" / "main.jsonl", "ab") as log:
                log.write(b'{"op":"commit","seq":9,"ent')
        elif state == "corrupt-log":
            log_path = agent / "sessions" / "s1" / "main.jsonl"
            lines = log_path.read_bytes().splitlines(keepends=True)
            log_path.write_bytes(lines[0][:20] + b"\n" + b"".join(lines[1:]) + b'{"op":"move","seq":3,"head":1}\n')
        elif state == "sessions-file":
            shutil.rmtree(agent / "sessions")
            (agent / "sessions").write_text("x\n")
        for path in ([agent] if state == "read-only" else []) + ([tmp / "read-only"] if freeze_spare else []):
            if _chattr("+i", path):
                here.frozen.append(path)
        holder = Store(agent / "sessions").open("s1", writer=True) if state == "locked" else None
        try:
            yield here
        finally:
            if holder is not None:
                holder.close()
            for path in here.frozen:
                _chattr("-i", path)


def cfg_state(path: Path, local_only: bool) -> int:
    """2: parses with no error; 1: parses, some line is refused; 0: does not parse or read."""
    read = read_cfg(path, Cvars(registry()), local_only=local_only)
    if not read.readable or any("does not parse" in e.message for e in read.errors):
        return 0
    return 1 if read.errors else 2


def _json_state(path: Path) -> int:
    """Judged apart from eukhe's reader: UTF-8 JSON whose top is an object."""
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError):
        return 0
    return 2 if isinstance(value, dict) else 0


def _log_state(path: Path) -> int:
    session_dir = path.parent
    try:
        with Store(session_dir.parent).open(session_dir.name, writer=False) as session:
            session.conversation(path.name[: -len(".jsonl")])
    except Exception:  # noqa: BLE001 - any failure to read is "unreadable" for the judge
        return 0
    return 2


def snapshot(root: Path) -> dict[Path, tuple[int, bytes]]:
    """Every document under the agent dir: how well it reads, and its bytes."""
    found: dict[Path, tuple[int, bytes]] = {}
    if not root.is_dir():
        return found
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name.endswith(".lock") or path.name.endswith(".tmp"):
            continue
        if path.suffix == ".cfg":
            state = cfg_state(path, local_only=path.parent.name == "agents" or path.name == "subagent.cfg")
        elif path.suffix == ".json":
            state = _json_state(path)
        elif path.suffix == ".jsonl" and path.parent.parent.name == "sessions":
            state = _log_state(path)
        else:
            continue
        found[path] = (state, path.read_bytes())
    return found


def judge(before: dict[Path, tuple[int, bytes]], after: dict[Path, tuple[int, bytes]]) -> list[str]:
    problems = []
    for path, (state, data) in before.items():
        now = after.get(path)
        if now is None:
            problems.append(f"{path} was removed")
        elif state == 0 and now[1] != data:
            problems.append(f"{path} could not be read before and was written over")
        elif now[0] < state:
            problems.append(f"{path} read at level {state} before and {now[0]} after")
    return problems


@contextlib.contextmanager
def environment(here: World) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    for name in [k for k in os.environ if k.startswith("EUKHE_")]:
        del os.environ[name]
    os.environ.update({"EUKHE_AGENT_DIR": str(here.agent), "HOME": str(here.tmp), "EUKHE_LOCK_TIMEOUT": "0"})
    os.chdir(here.tmp)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


