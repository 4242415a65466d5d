"""The chat index's checks to the letter: which bytes of a day file its fingerprint reads, and
that an index file whose header is checksummed but malformed is never used (the logs are then
scanned whole)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eukhe.memory.index import INDEX_MAGIC, TreeLog, fingerprint, parse_index
from eukhe.memory.records import CorruptLine, Kind, Message, NodeLine
from eukhe.memory.store import INDEX_FILE, Store

EDGE, SPOT = 1 << 16, 1 << 12  # the whole first and last 64 KiB, and 4 KiB at each 17th of the file


def _day_file(tmp_path: Path, length: int) -> Path:
    """A day file of ``length`` bytes that differ from their neighbours."""
    path = tmp_path / "2026-12-01.jsonl"
    path.write_bytes(bytes(i % 251 for i in range(length)))
    return path


def test_the_fingerprint_reads_both_edges_and_every_seventeenth(tmp_path: Path) -> None:
    length = 20 * EDGE  # each seventeenth lies outside both edges
    path = _day_file(tmp_path, length)
    before = fingerprint(path, length)
    offsets = [0, EDGE - 1, length - EDGE, length - 1] + [length * k // 17 for k in range(1, 17)]
    for at in offsets:
        with path.open("r+b") as handle:  # in place: the same file, the same size
            handle.seek(at)
            old = handle.read(1)
            handle.seek(at)
            handle.write(bytes([old[0] ^ 0xFF]))
        assert fingerprint(path, length) != before, f"a byte changed at {at} goes unseen"
        with path.open("r+b") as handle:
            handle.seek(at)
            handle.write(old)
        assert fingerprint(path, length) == before
    between = length * 3 // 17 + SPOT  # just past a spot, inside no edge: not read
    with path.open("r+b") as handle:
        handle.seek(between)
        handle.write(b"\x00")
    assert fingerprint(path, length) == before


@pytest.mark.parametrize("length", [100, 20 * EDGE + 5], ids=["shorter than an edge", "twenty edges"])
def test_the_fingerprint_is_the_documented_digest(tmp_path: Path, length: int) -> None:
    """An index written by one version is used by the next only while its fingerprint stays
    what the format says: blake2b-128 of ``inode:length``, then the first and the last 64 KiB,
    then 4 KiB at each k/17 of the length (k = 1..16), each cut at the length."""
    path = _day_file(tmp_path, length + 7)  # bytes past the length are not read
    data = path.read_bytes()[:length]
    digest = hashlib.blake2b(f"{path.stat().st_ino}:{length}".encode(), digest_size=16)
    digest.update(data[:EDGE])
    digest.update(data[-EDGE:])
    for k in range(1, 17):
        digest.update(data[length * k // 17 :][:SPOT])
    assert fingerprint(path, length) == digest.hexdigest()


DATE = "2026-12-01T10:00:00+00:00"
GOOD = '{"i":1,"kind":"user","text":"ok","size":2,"date":"' + DATE + '"}\n'  # a good line after the line tested


def _opened(chat: Path) -> Store:
    return Store(chat, now=lambda: DATE)


def _chat_of(tmp_path: Path, day_file: bytes) -> Path:
    """A chat directory holding one day file of these bytes."""
    chat = tmp_path / "chat"
    chat.mkdir()
    (chat / "2026-12-01.jsonl").write_bytes(day_file)
    return chat


def message_line(first: str, text: str = "hi", size: int = 2) -> str:
    """A message line of the writer's shape, from its opening (``{"i":0``) on."""
    return first + ',"kind":"user","text":"' + text + '","size":' + str(size) + ',"date":"' + DATE + '"}\n'


def _index(tmp_path: Path) -> bytes:
    store = _opened(tmp_path / "chat")
    for i in range(4):
        store.message(Message(i, Kind.USER, f"message {i}", DATE))
    store.node(NodeLine((1, 0), "messages 0 and 1"))
    store.close()
    reopened = _opened(tmp_path / "chat")
    reopened.close()
    return (tmp_path / "chat" / INDEX_FILE).read_bytes()


def _with_header(data: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    """The index with its header changed and its checksum made right again."""
    at = len(INDEX_MAGIC)
    size = int.from_bytes(data[at : at + 8], "little")
    header = json.loads(data[at + 8 : at + 8 + size])
    change(header)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = INDEX_MAGIC + len(head).to_bytes(8, "little") + head + data[at + 8 + size : -16]
    return body + hashlib.blake2b(body, digest_size=16).digest()


def _set(*path_and_value: Any) -> Callable[[dict[str, Any]], None]:
    *path, value = path_and_value

    def change(header: dict[str, Any]) -> None:
        place = header
        for key in path[:-1]:
            place = place[key]
        place[path[-1]] = value

    return change


def _a_negative_length(header: dict[str, Any]) -> None:
    """The last array with bytes given the length -1, then two spare arrays that take the
    offset back to its end: every length still sums to the body's bytes."""
    arrays = header["arrays"]
    j = max(k for k, (_, length) in enumerate(arrays) if length > 0)
    name, length = arrays[j]
    header["arrays"] = [*arrays[:j], [name, -1], ["spare", 1], ["again", length], *arrays[j + 1 :]]


def _a_place_at_the_covered_end(header: dict[str, Any]) -> None:
    """The messages' covered prefix cut to the offset where its last line starts (the four
    lines are of one length): that line's place is then at the prefix's end, past its lines."""
    ((name, size, lines),) = header["messages"]["files"]
    header["messages"]["files"] = [[name, size * (lines - 1) // lines, lines]]


MALFORMED = {
    "newest of three numbers": _set("tree", "newest", [1, 0, 0]),
    "newest negative": _set("tree", "newest", [1, -1]),
    "newest in text": _set("tree", "newest", [1, "0"]),
    "newest a number": _set("tree", "newest", 3),
    "depths past 64": _set("tree", "depths", 65),
    "t not the message count": _set("tree", "t", 5),
    "a key past the messages": _set("messages", "keys", {"k": 4}),
    "a file entry of four": _set("messages", "files", [["2026-12-01.jsonl", 340, 4, 1]]),
    "prints not text": _set("messages", "prints", [7]),
    "an array of length -1": _a_negative_length,
    "a place at the covered end": _a_place_at_the_covered_end,
}


def test_an_index_as_written_is_used(tmp_path: Path) -> None:
    assert parse_index(_index(tmp_path)) is not None
    assert parse_index(_with_header(_index(tmp_path / "again"), lambda header: None)) is not None


@pytest.mark.parametrize("change", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_checksummed_index_with_a_malformed_header_is_not_used(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    assert parse_index(_with_header(_index(tmp_path), change)) is None


def test_day_files_are_made_private_to_the_owner(tmp_path: Path) -> None:
    """0600 in 0700 directories, even under the usual umask 022 (issue 30: they hold the user's
    conversations; tests/memory_store/test_private_and_durable_files.py checks every file)."""
    old = os.umask(0o022)
    try:
        store = _opened(tmp_path / "chat")
        store.message(Message(0, Kind.USER, "hello", DATE))
        store.node(NodeLine((0, 0), "hello"))
        store.close()
    finally:
        os.umask(old)
    day_files = sorted((tmp_path / "chat").rglob("*.jsonl"))
    assert [p.relative_to(tmp_path / "chat").as_posix() for p in day_files] == ["2026-12-01.jsonl", "tree/2026-12-01.jsonl"]
    assert [stat.S_IMODE(p.stat().st_mode) for p in day_files] == [0o600, 0o600]
    assert [stat.S_IMODE(p.parent.stat().st_mode) for p in day_files] == [0o700, 0o700]


def test_a_message_line_with_a_wrong_first_key_before_a_good_end_is_named_by_its_line(tmp_path: Path) -> None:
    """A line whose end is a message's (``"size":n,"date":"..."}``) but whose first key is not
    ``i`` is not a message: reading the chat names its line."""
    chat = _chat_of(tmp_path, (message_line('{"j":0') + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: unknown fields \['j'\]"):
        Store(chat)


def test_a_chat_whose_only_line_is_torn_opens_empty_and_is_indexed(tmp_path: Path) -> None:
    chat = _chat_of(tmp_path, b'{"i":0,"kind":"us')  # cut by a crash
    store = _opened(chat)
    assert len(store.messages) == 0
    store.close()
    assert (chat / "2026-12-01.jsonl").read_bytes() == b'{"i":0,"kind":"us'  # marked by the first append only
    _opened(chat).close()
    assert parse_index((chat / INDEX_FILE).read_bytes()) is not None


@pytest.mark.parametrize("first", ['{"i":', '{"i":00'], ids=["no number", "a leading zero"])
def test_a_message_line_whose_id_is_no_json_number_is_named_by_its_line(tmp_path: Path, first: str) -> None:
    chat = _chat_of(tmp_path, (message_line(first) + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: not JSON: "):
        Store(chat)


TEXTS = ["tab\there", "line\nbreak", "\x01\x1f", "\u2028", "a\\", "a\\\\", 'say "hi"', '\\"', '\\\\"', "x\\\\\\", '"', "\\", 'end \\"', "\u00e9\\\u00e9", "plain"]


def test_texts_of_quotes_and_backslash_runs_read_back_as_written(tmp_path: Path) -> None:
    for order in (TEXTS, TEXTS[::-1]):
        chat = tmp_path / str(len(list(tmp_path.iterdir())))
        store = _opened(chat)
        for i, text in enumerate(order):
            store.message(Message(i, Kind.USER, text, DATE))
        store.close()
        for _ in range(2):  # the scan, then the index
            again = _opened(chat)
            assert [m.text for m in again.messages] == order
            again.close()


@pytest.mark.parametrize(("text", "size"), [("hi\\", 2), ("a\\\\b\\", 3)], ids=["one backslash", "an escaped one before"])
def test_a_text_whose_closing_quote_is_escaped_is_named_by_its_line(tmp_path: Path, text: str, size: int) -> None:
    """``"text":"hi\\","size":2,...``: the quote after the backslash is part of the text, so the
    line is no JSON at all, even when that backslash is the last one in the file (alone, or after
    another escape)."""
    chat = _chat_of(tmp_path, (message_line('{"i":0', text, size) + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: not JSON: "):
        Store(chat)


def test_a_text_whose_size_counts_an_escaped_backslash_twice_is_named_by_its_line(tmp_path: Path) -> None:
    """``a\\\\n`` is JSON for ``a\\n``: three bytes (the second backslash is escaped, and escapes
    nothing itself), so a line stating two is refused."""
    chat = _chat_of(tmp_path, (message_line('{"i":0', "a\\\\n", 2) + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: size 2 is not the text's 3 bytes"):
        Store(chat)


@pytest.mark.parametrize("text", ["n\\q", "t\\x", "\\\\\\q"], ids=["after n", "after t", "after an escaped backslash"])
def test_a_text_with_an_unknown_escape_is_named_by_its_line(tmp_path: Path, text: str) -> None:
    """``\\q`` is no JSON escape, whatever the byte before the backslash."""
    chat = _chat_of(tmp_path, (message_line('{"i":0', text, len(text) - 1) + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: not JSON: "):
        Store(chat)


def test_nodes_beyond_the_chat_name_the_first_of_them(tmp_path: Path) -> None:
    """Two node lines far beyond a chat of two messages (indexes of 20 digits, past an int64):
    the tree's problem names the first."""
    tree = tmp_path / "tree"
    tree.mkdir()
    far = ['{"l":0,"i":' + str(10**19 + k) + ',"text":"x","size":1}\n' for k in (1, 2)]
    (tree / "2026-12-01.jsonl").write_text("".join(far), encoding="utf-8")
    log = TreeLog(tree, 2)
    try:
        assert log.problem == "node (0, 10000000000000000001) logged twice or beyond the chat's 2 messages"
    finally:
        log.close()


def test_a_message_line_whose_date_has_another_key_is_named_by_its_line(tmp_path: Path) -> None:
    """A line framed as a message up to its last key, which is not ``date``: not a message."""
    line = '{"i":0,"kind":"user","text":"hi","size":2,"dote":"' + DATE + '"}\n'
    chat = _chat_of(tmp_path, (line + GOOD).encode())
    with pytest.raises(CorruptLine, match=r"2026-12-01\.jsonl: line 1: date must be a string, not None"):
        Store(chat)
