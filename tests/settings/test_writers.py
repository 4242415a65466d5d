"""Every writer of a config document (issue 10 item 4, DESIGN "nothing is lost"), on real files:
settings.json (``mcp add``, the setters), mcp-connections.json, auth.json, the global
config.cfg (``set --global``, a global toggle) and agents/<name>.cfg (``cvar save``). They all
go through ``files.write_atomic``; each rule is checked on each writer:

- the file's mode stays (auth.json: always 0600);
- a symlinked file is written through: the target changes, the symlink stays, the temporary
  file and the lock live beside the target;
- a leading UTF-8 BOM is not text: the file reads, the rewrite keeps every other byte of it
  and drops the BOM (files.py says why);
- a cfg file with a line that does not parse is refused (DocumentError naming the file and
  the line), byte for byte as it was.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from eukhe.session import Store
from eukhe.settings import config
from eukhe.settings.agent import CvarAgent, EukheSettings
from eukhe.settings.cvar_table import registry
from eukhe.settings.files import NOT_PARSED, DocumentError, read_document, target, write_atomic

Dirs = tuple[Path, Path, Path]


@dataclass(frozen=True)
class Writer:
    name: str
    file: str  # relative to the agent dir
    body: bytes  # a valid file the writer changes
    write: Callable[[Path, Path], None]  # (agent dir, sessions dir)
    kept: Callable[[bytes], bool]  # the body's own content survived the write
    private: bool = False


def _cvar_save(agent_dir: Path, sessions: Path) -> None:
    with Store(sessions).create("s") as session:
        agent = CvarAgent(EukheSettings(agent_dir), session.conversation("main"))
        agent.set("transport", "sse")
        assert agent.save() == [("transport", "sse")]


JSON_BODY = b'{\n  "x": 1,\n  "openai": {"key": "old"}\n}\n'
CFG_BODY = b"# mine\nset defaultModel kept\n"


def _json_kept(data: bytes) -> bool:
    return bool(json.loads(data.decode("utf-8"))["x"] == 1)


def _cfg_kept(data: bytes) -> bool:
    text = data.decode("utf-8")
    return text.startswith("# mine\n") and "set defaultModel kept\n" in text


WRITERS = [
    Writer("mcp add", "settings.json", JSON_BODY, lambda a, s: None if config.mcp_add(a / "settings.json", "git", {}) else None, _json_kept),
    Writer("setter", "settings.json", JSON_BODY,
           lambda a, s: None if config.set_setting(registry(), config.Paths(a), "defaultModel", "m") else None, _json_kept),
    Writer("mcp connection", "mcp-connections.json", JSON_BODY,
           lambda a, s: None if config.record_connection(a / "mcp-connections.json", "git", {"pid": 1}) else None, _json_kept),
    Writer("auth set", "auth.json", JSON_BODY, lambda a, s: config.AuthStorage(a / "auth.json").set("openai", {"key": "k"}), _json_kept,
           private=True),
    Writer("auth remove", "auth.json", JSON_BODY, lambda a, s: config.AuthStorage(a / "auth.json").remove("openai"), _json_kept,
           private=True),
    Writer("set --global", "config.cfg", CFG_BODY, lambda a, s: None if EukheSettings(a).set_global("retry.maxRetries", "4") else None,
           _cfg_kept),
    Writer("toggle --global", "config.cfg", CFG_BODY, lambda a, s: None if EukheSettings(a).toggle_global("retry.enabled") else None,
           _cfg_kept),
    Writer("cvar save", "agents/main.cfg", CFG_BODY, _cvar_save, _cfg_kept),
]
CFG_WRITERS = [w for w in WRITERS if w.file.endswith(".cfg")]


def _ids(writers: list[Writer]) -> list[str]:
    return [w.name for w in writers]


def _place(agent_dir: Path, writer: Writer, data: bytes) -> Path:
    path = agent_dir / writer.file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("writer", WRITERS, ids=_ids(WRITERS))
def test_every_writer_keeps_the_mode_of_its_file(dirs: Dirs, writer: Writer) -> None:
    agent_dir, _, sessions = dirs
    path = _place(agent_dir, writer, writer.body)
    os.chmod(path, 0o664)
    writer.write(agent_dir, sessions)
    assert writer.kept(path.read_bytes())
    assert path.stat().st_mode & 0o7777 == (0o600 if writer.private else 0o664)


@pytest.mark.parametrize("writer", WRITERS, ids=_ids(WRITERS))
def test_every_writer_creates_its_file_private(dirs: Dirs, writer: Writer) -> None:
    agent_dir, _, sessions = dirs
    writer.write(agent_dir, sessions)
    assert (agent_dir / writer.file).stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("writer", WRITERS, ids=_ids(WRITERS))
def test_every_writer_writes_through_a_symlink(dirs: Dirs, tmp_path: Path, writer: Writer) -> None:
    agent_dir, _, sessions = dirs
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "the-file"
    real.write_bytes(writer.body)
    os.chmod(real, 0o640)
    link = agent_dir / writer.file
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(real, link.parent))  # a relative link: resolved from the link's dir
    writer.write(agent_dir, sessions)
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(real, link.parent)
    assert real.read_bytes() != writer.body and writer.kept(real.read_bytes())
    assert real.stat().st_mode & 0o777 == (0o600 if writer.private else 0o640)
    assert sorted(p.name for p in dotfiles.iterdir()) == ["the-file", "the-file.lock"]  # no temporary file left
    assert not (link.parent / (link.name + ".lock")).exists()  # one lock for every link to the file


@pytest.mark.parametrize("writer", WRITERS, ids=_ids(WRITERS))
def test_every_writer_reads_a_bom_and_writes_without_it(dirs: Dirs, writer: Writer) -> None:
    agent_dir, _, sessions = dirs
    path = _place(agent_dir, writer, b"\xef\xbb\xbf" + writer.body)
    writer.write(agent_dir, sessions)
    data = path.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf") and writer.kept(data)


@pytest.mark.parametrize("writer", CFG_WRITERS, ids=_ids(CFG_WRITERS))
@pytest.mark.parametrize(
    "broken",
    [b'set defaultModel "unterminated\n', b"# fine\nset retry.maxRetries 2\nalias go \"set x \\\"open\"\n",
     b"set defaultModel a\r\nset defaultModel \"b\n"],
    ids=["unterminated", "alias-body", "second-line"],
)
def test_every_cfg_writer_refuses_a_file_that_does_not_parse(dirs: Dirs, writer: Writer, broken: bytes) -> None:
    agent_dir, _, sessions = dirs
    path = _place(agent_dir, writer, broken)
    os.chmod(path, 0o644)
    before = os.stat(path)
    with pytest.raises(DocumentError) as caught:
        writer.write(agent_dir, sessions)
    line = broken.decode().split("\n").index(next(x for x in broken.decode().split("\n") if x.count('"') % 2)) + 1
    assert caught.value.kind == NOT_PARSED and caught.value.path == path and caught.value.detail.startswith(f"line {line}: ")
    assert path.read_bytes() == broken and os.stat(path).st_ino == before.st_ino


def test_a_bom_in_settings_json_reads(dirs: Dirs) -> None:
    path = dirs[0] / "settings.json"
    path.write_bytes(b'\xef\xbb\xbf{"defaultModel": "m"}')
    assert read_document(path) == {"defaultModel": "m"}
    assert EukheSettings(dirs[0]).cvars.sourced([], "defaultModel") == ("m", "global settings.json")


def test_a_bom_only_at_the_start_is_dropped(dirs: Dirs) -> None:
    """A BOM inside a value is a character of the value: only the first one of the file goes."""
    path = dirs[0] / "config.cfg"
    path.write_bytes('\ufeffset defaultModel "\ufeffx"\n'.encode("utf-8"))
    assert EukheSettings(dirs[0]).cvars.sourced([], "defaultModel") == ("\ufeffx", "global config.cfg")


def test_a_symlink_loop_is_an_error_and_nothing_is_written(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "settings.json").symlink_to("other.json")
    (agent_dir / "other.json").symlink_to("settings.json")
    with pytest.raises(OSError):
        config.mcp_add(agent_dir / "settings.json", "git", {})
    with pytest.raises(OSError):
        write_atomic(agent_dir / "settings.json", "{}\n")
    assert sorted(p.name for p in agent_dir.iterdir()) == ["other.json", "settings.json"]


def test_a_dangling_symlink_creates_its_target(dirs: Dirs, tmp_path: Path) -> None:
    agent_dir = dirs[0]
    real = tmp_path / "later.json"
    (agent_dir / "settings.json").symlink_to(real)
    assert target(agent_dir / "settings.json") == real
    config.mcp_add(agent_dir / "settings.json", "git", {})
    assert (agent_dir / "settings.json").is_symlink() and json.loads(real.read_text()) == {"mcpServers": {"git": {}}}


def test_a_write_keeps_the_group_of_its_file(dirs: Dirs) -> None:
    """A group-writable file stays writable by its group: the replace keeps owner and group
    (here as root, which may give any; a user keeps a group it is in)."""
    path = dirs[0] / "settings.json"
    path.write_text("{}\n")
    if os.geteuid() != 0:
        pytest.skip("only root can give a file another owner to start from")
    os.chown(path, 4321, 4322)
    config.mcp_add(path, "git", {})
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4322)
