"""The index beside the logs (issue 11 item 9: the start of a big chat): a start with the index
reads only what was appended since it was written, and gives exactly what a start without it
gives; an index that is missing, torn, tampered with or stale (the files changed under it) is
never trusted: the logs are scanned whole and the result is the same as with no index."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from eukhe.memory.durable import DurableChat
from eukhe.memory.index import MessageLog, TreeLog
from eukhe.memory.records import Kind, Message, StoreError, Torn, encode
from eukhe.memory.store import INDEX_FILE, Store

from tests.memory_store.test_memory_store import Clock, opened, run_history, text_of


@pytest.fixture(autouse=True)
def _index_every_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A start writes the index again whenever the logs grew (not only by 8 MiB): each start
    below resumes from the end of the logs as the last start left them."""
    from eukhe.memory import store

    monkeypatch.setattr(store, "INDEX_GROWTH", 1)


def _state(store: Store, durable: DurableChat) -> dict[str, Any]:
    """Everything a start reads from the logs, and the reopened planner's view."""
    messages, tree = store.messages, store.tree
    return {
        "messages": list(messages),
        "keys": dict(messages.keys),
        "tail": _tail(messages.tail),
        "tree": list(tree),
        "tree_tail": _tail(tree.tail),
        "rows": tree.rows,
        "order": [list(o) for o in tree.order],
        "merges": tree.merges,
        "newest": tree.newest,
        "view": list(durable.chat.view.nodes),
        "sizes": list(durable.chat.view.sizes),
        "open": durable.chat.open,
        "built": durable.chat.built_count,
    }


def _tail(tail: Any) -> tuple[str | None, int, bool]:
    return (None if tail.path is None else tail.path.name, tail.torn, tail.terminated)


def _start(directory: Path) -> tuple[str, dict[str, Any] | str]:
    """What a start finds of the index, and what it reads (or the error it raises)."""
    try:
        store, durable = opened(directory, clock=Clock("2026-12-01"))
    except StoreError as error:
        return "error", f"{type(error).__name__}: {error}".replace(str(directory), "<chat>")
    state = _state(store, durable)
    found = store.index
    store.close()
    return found, state


def _without_index(directory: Path, scratch: Path) -> dict[str, Any] | str:
    """The start of a copy of the chat with no index."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(directory, scratch)
    (scratch / INDEX_FILE).unlink(missing_ok=True)
    found, state = _start(scratch)
    assert found in ("missing", "error")
    return state


def _chat(directory: Path, messages: int = 120, seed: int = 3) -> None:
    store, durable = opened(directory)
    run_history(durable, random.Random(seed), messages, late=True)
    durable.message("keyed", Kind.NOTE, key="k-1")
    store.close()
    store, durable = opened(directory)  # this start reads what was appended, and indexes it
    assert store.index == "used" and store.index_written
    store.close()


def test_a_start_with_the_index_reads_what_a_start_without_it_reads(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    _chat(chat)
    assert (chat / INDEX_FILE).exists(), "the first start writes the index"
    found, state = _start(chat)
    assert found == "used"
    assert state == _without_index(chat, tmp_path / "plain")


def test_the_index_is_written_again_only_when_the_logs_grew_past_it(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    _chat(chat)  # its last start read the appended lines and wrote the index again
    store, durable = opened(chat)
    assert store.index == "used" and not store.index_written, "nothing was appended since"
    durable.message("one more")  # past INDEX_GROWTH, 1 byte here
    store.close()
    store, _ = opened(chat)
    assert store.index == "used" and store.index_written
    store.close()


def test_lines_appended_after_the_index_are_read(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    _chat(chat)
    store, durable = opened(chat, clock=Clock("2026-11-30"))
    run_history(durable, random.Random(9), 40, late=True)  # same day file: the covered file grows
    store.close()
    store, durable = opened(chat, clock=Clock("2026-12-02"))
    run_history(durable, random.Random(10), 30, late=True)  # a new day file after the covered ones
    store.close()
    found, state = _start(chat)
    assert found == "used"
    assert state == _without_index(chat, tmp_path / "plain")
    assert len(state["messages"]) == 121 + 70  # type: ignore[index]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x41]) + data[at + 1 :]


def test_a_tampered_index_gives_what_no_index_gives(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    _chat(chat)
    expected = _without_index(chat, tmp_path / "plain")
    good = (chat / INDEX_FILE).read_bytes()
    r = random.Random(11)
    tampered = [b"", b"x", good[:-1], good[: len(good) // 2], good + b"\0", bytes(len(good)), good[::-1]]
    tampered += [_flip(good, at) for at in sorted(r.sample(range(len(good)), 40)) + [0, len(good) - 1]]
    for data in tampered:
        (chat / INDEX_FILE).write_bytes(data)
        found, state = _start(chat)
        assert found == "unreadable" and state == expected
    (chat / INDEX_FILE).unlink()
    (chat / INDEX_FILE).mkdir()  # not even a file
    found, state = _start(chat)
    assert found == "unreadable" and state == expected


def _edits(chat: Path) -> dict[str, Any]:
    """Changes of the day files under a written index (none a writer of the log makes, but a
    crash, a restore or a hand edit can), each to be applied to a fresh copy."""
    day = chat / "2026-11-30.jsonl"
    tree = chat / "tree" / "2026-11-30.jsonl"
    data = day.read_bytes()
    lines = data.splitlines(keepends=True)

    def write(path: Path, content: bytes) -> None:
        path.write_bytes(content)

    return {
        "messages truncated": lambda c: write(c / day.name, data[: len(data) - len(lines[-1])]),
        "last message rewritten, same length": lambda c: write(c / day.name, data[: len(data) - len(lines[-1])] + lines[-1].replace(b"keyed", b"KEYED")),
        "first message rewritten, same length": lambda c: write(c / day.name, lines[0].replace(b"m0", b"M0") + b"".join(lines[1:])),
        "tree truncated": lambda c: write(c / "tree" / tree.name, tree.read_bytes()[:-1]),
        "a day file removed": lambda c: (c / day.name).unlink(),
        "a day file renamed": lambda c: (c / day.name).rename(c / "2026-11-29.jsonl"),
        "an older day file added": lambda c: write(c / "2026-11-01.jsonl", encode(Message(0, Kind.USER, "older", "2026-11-01T10:00:00+00:00"))),
        "a file replaced by a copy": lambda c: shutil.copyfile(c / day.name, c / "copy") and (c / "copy").rename(c / day.name),
        "a torn tail appended": lambda c: write(c / day.name, data + b'{"i":121,"kind":"user","te'),
        "a torn tail and its marker appended": lambda c: write(c / day.name, data + b'{"i":121,"kind":"user","te\n' + encode(Torn(len(lines) + 1))),
        "a marker naming a covered line": lambda c: write(c / day.name, data + encode(Torn(len(lines)))),
        "a gap appended": lambda c: write(c / day.name, data + encode(Message(500, Kind.USER, "far", "2026-11-30T11:00:00+00:00"))),
        "a bad line appended before a good one": lambda c: write(c / day.name, data + b"oops\n" + encode(Message(121, Kind.USER, "next", "2026-11-30T11:00:00+00:00"))),
        "a node logged twice appended": lambda c: write(c / "tree" / tree.name, tree.read_bytes() + tree.read_bytes().splitlines(keepends=True)[0]),
        "the index copied with the chat": lambda c: shutil.copytree(chat, c, dirs_exist_ok=True),
    }


def test_a_stale_index_gives_what_no_index_gives(tmp_path: Path) -> None:
    chat = tmp_path / "chat"
    _chat(chat)
    for name, edit in _edits(chat).items():
        case = tmp_path / "case"  # made as the chat was, not copied: a copy's files are other files
        shutil.rmtree(case, ignore_errors=True)
        _chat(case)
        edit(case)
        expected = _without_index(case, tmp_path / "plain")
        found, state = _start(case)
        assert state == expected, name
        assert found == FOUND[name], name


FOUND = {  # what the start found of the index: the edits inside the covered prefixes make it stale
    "messages truncated": "error",
    "last message rewritten, same length": "stale",
    "first message rewritten, same length": "stale",
    "tree truncated": "error",  # its last merge line cut after view.json showed it: no crash's (issue 30)
    "a day file removed": "error",
    "a day file renamed": "stale",
    "an older day file added": "error",
    "a file replaced by a copy": "stale",
    "a torn tail appended": "used",
    "a torn tail and its marker appended": "used",
    "a marker naming a covered line": "error",
    "the index copied with the chat": "stale",
    "a gap appended": "error",
    "a bad line appended before a good one": "error",
    "a node logged twice appended": "error",
}


@pytest.mark.parametrize("chunk", [7, 300, 1 << 24])
def test_the_index_resumes_at_any_piece_size(tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from eukhe.memory import index

    monkeypatch.setattr(index, "CHUNK", chunk)
    chat = tmp_path / "chat"
    _chat(chat, messages=40)
    store, durable = opened(chat)
    for i in range(5):
        durable.message(text_of(i, 90))
    store.close()
    found, state = _start(chat)
    assert found == "used" and state == _without_index(chat, tmp_path / "plain")


def test_the_logs_without_a_store_write_no_index(tmp_path: Path) -> None:
    (tmp_path / "2026-11-30.jsonl").write_bytes(encode(Message(0, Kind.USER, "a", "2026-11-30T10:00:00+00:00")))
    MessageLog(tmp_path).close()
    TreeLog(tmp_path / "tree", 1).close()
    assert not (tmp_path / INDEX_FILE).exists()
