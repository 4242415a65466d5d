"""Issue 30 (hardening from the outside), durability edges of the chat memory's logs.

- A clock whose local date steps back (a change of time zone) never blocks the chat: the day
  files stay in the order of the ids, the next lines going to the newest day file.
- Garbage or loss in a log is never silent: a tail that no crash leaves (more than one cut line),
  a day file of tree/ deleted or cut, message lines lost under logged nodes are refused, naming
  the file and the line. A crash's torn last line (memory.md rule 6, daylog's torn tail) is still
  skipped and terminated.
- An error found inside a prefix the index covers names its file and line, and the command line
  gives it exit 1 (a fault of the environment, not bad input).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.memory import NODE
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind, Message, NodeLine, StoreError, encode
from eukhe.memory.store import INDEX_FILE, Store, chat_dir
from tests.memory_store.test_memory_store import SMALL, Clock, opened, run_history

# -- a clock that steps back -------------------------------------------------------------------------


def test_a_local_date_that_steps_back_keeps_appending_to_the_newest_day_file(tmp_path: Path) -> None:
    clock = Clock("2026-12-01")
    store, durable = opened(tmp_path, clock=clock)
    durable.message("before the flight")
    durable.message("y" * (NODE + 1))  # a node a model builds: a tree line after the step back
    clock.day = "2026-11-30"  # the time zone changed: the local date is a day earlier
    durable.message("after the flight")
    durable.done(0, "the summary")
    durable.message("and one more")
    store.close()
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["2026-12-01.jsonl"]
    assert sorted(p.name for p in (tmp_path / "tree").glob("*.jsonl")) == ["2026-12-01.jsonl"]
    store, durable = opened(tmp_path, clock=clock)  # no IdGap: the chat opens
    assert [m.text for m in store.messages] == ["before the flight", "y" * (NODE + 1), "after the flight", "and one more"]
    assert [m.date[:10] for m in store.messages] == ["2026-12-01", "2026-12-01", "2026-11-30", "2026-11-30"]  # the clock's own dates
    durable.message("still the 30th")  # a reopened store knows the newest day file too
    clock.day = "2026-12-02"  # a later date opens a new day file, as before
    durable.message("the next day")
    store.close()
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["2026-12-01.jsonl", "2026-12-02.jsonl"]
    again = Store(tmp_path, now=clock)
    assert [m.i for m in again.messages] == list(range(6))
    again.close()


def test_an_owner_with_a_clock_that_steps_back_keeps_the_chat_open(tmp_path: Path) -> None:
    clock = Clock("2026-12-01")
    with Memory(tmp_path, SMALL, now=clock) as memory:
        memory.append("first")
        clock.day = "2026-11-29"
        memory.append("second")
    clock.day = "2026-11-28"
    with Memory(tmp_path, SMALL, now=clock) as memory:
        assert memory.append("third") == [2]
        assert memory.date(2).startswith("2026-11-28")
    with Memory(tmp_path, SMALL, now=clock) as memory:
        assert memory.status()["messages"] == 3
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["2026-12-01.jsonl"]


# -- garbage and loss in the logs ------------------------------------------------------------------


def _three_days(directory: Path) -> None:
    """A chat of 300 messages over three days, every summary built, several batches."""
    clock = Clock("2026-11-28")
    store, durable = opened(directory, clock=clock)
    r = random.Random(3)
    for day in ["2026-11-28", "2026-11-29", "2026-11-30"]:
        clock.day = day
        run_history(durable, r, 100)
    store.close()


@pytest.fixture(scope="module")
def three_days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("three_days") / "chat"
    _three_days(directory)
    return directory


@pytest.fixture
def chat(three_days: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "chat"
    shutil.copytree(three_days, copy)
    return copy


def _open(directory: Path) -> tuple[int, int, list[tuple[int, int]]]:
    store, durable = opened(directory)
    try:
        return durable.chat.t, durable.chat.built_count, list(durable.chat.view.nodes)
    finally:
        store.close()


def _refused(directory: Path) -> str:
    with pytest.raises(StoreError) as caught:
        _open(directory)
    return str(caught.value)


def test_the_three_day_chat_opens_whole(chat: Path) -> None:
    t, built, view = _open(chat)
    assert t == 300 and built > 500 and any(level > 0 for level, _ in view)
    assert _open(chat) == (t, built, view)


@pytest.mark.parametrize("index", [True, False], ids=["indexed", "no-index"])
def test_the_newest_tree_file_replaced_by_garbage_is_refused_naming_its_first_line(chat: Path, index: bool) -> None:
    if not index:
        (chat / INDEX_FILE).unlink()
    tree = chat / "tree" / "2026-11-30.jsonl"
    tree.write_bytes(os.urandom(3_000).replace(b"\n", b"?") + b"\n" + b"junk\n" * 40)
    error = _refused(chat)
    assert f"{tree}: line 1:" in error, error


def test_garbage_after_the_last_good_tree_line_is_refused_unlike_a_crash_tail(chat: Path) -> None:
    tree = chat / "tree" / "2026-11-30.jsonl"
    whole = tree.read_bytes()
    lines = whole.count(b"\n")
    tree.write_bytes(whole + b'{"l":0,"i":4' + b"\n" + b"not a line\n")
    error = _refused(chat)
    assert f"{tree}: line {lines + 1}:" in error and "crash" in error, error


def test_the_newest_tree_file_cut_to_one_torn_line_is_refused_naming_the_message_without_its_node(chat: Path) -> None:
    """One line without its newline is what a crash leaves; but the messages before the last one
    then have no node line though they are short (rule 12: each is logged with its message)."""
    tree = chat / "tree" / "2026-11-30.jsonl"
    tree.write_bytes(b'{"l":0,"i":200,"text":"cut')
    error = _refused(chat)
    assert "2026-11-30.jsonl: line " in error and "tree/2026-11-30.jsonl" in error and "no node line" in error, error


@pytest.mark.parametrize("day", ["2026-11-30", "2026-11-29", "2026-11-28"])
def test_a_deleted_tree_file_is_refused_naming_what_lacks_it(chat: Path, day: str) -> None:
    (chat / "tree" / f"{day}.jsonl").unlink()
    error = _refused(chat)  # the reopening would have logged their short messages' nodes again, silently
    assert "line " in error and "tree/2026-11-" in error, error


def test_a_lost_merge_line_is_found_by_the_saved_view(chat: Path) -> None:
    """The tree's merge lines removed, view.json kept: the saved view names merged lines the log no
    longer makes (view.json is a check, D1: here it is the check that catches the loss)."""
    for path in (chat / "tree").glob("*.jsonl"):
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if '"merge"' not in line))
    error = _refused(chat)
    assert "view.json" in error and "merge" in error, error
    (chat / "view.json").unlink()  # without the check the merges are gone for good: the view is the messages'
    assert _open(chat)[0] == 300


def test_a_message_cut_in_the_newest_day_file_under_its_logged_node_is_refused_naming_file_and_line(chat: Path) -> None:
    day = chat / "2026-11-30.jsonl"
    data = day.read_bytes()
    lines = data.count(b"\n")
    day.write_bytes(data[:-30])  # the last message loses its end: no crash leaves this (its node is logged)
    error = _refused(chat)
    assert f"{day}: line {lines}:" in error and "(0, 299)" in error, error


def test_message_lines_lost_at_the_end_are_refused_naming_the_tree_line_of_their_node(chat: Path) -> None:
    day = chat / "2026-11-30.jsonl"
    data = day.read_bytes()
    day.write_bytes(b"".join(data.splitlines(keepends=True)[:-2]))  # two whole lines gone
    error = _refused(chat)
    assert "tree/2026-11-30.jsonl: line " in error and "(0, 298)" in error and f"{day}" in error, error


def test_a_crash_torn_last_message_still_opens(chat: Path) -> None:
    """The crash case the store skips: a message line cut before its node was logged."""
    day = chat / "2026-11-30.jsonl"
    day.write_bytes(day.read_bytes() + encode(Message(300, Kind.USER, "cut by a crash", "2026-11-30T12:00:00+00:00"))[:25])
    assert _open(chat)[0] == 300
    store, durable = opened(chat)
    assert durable.message("after the crash") == 300
    store.close()
    assert _open(chat)[0] == 301


def test_a_crash_between_a_short_message_and_its_node_line_still_opens(chat: Path) -> None:
    day = chat / "2026-11-30.jsonl"
    day.write_bytes(day.read_bytes() + encode(Message(300, Kind.USER, "short", "2026-11-30T12:00:00+00:00")))
    t, built, _view = _open(chat)  # its node is built again at the reopening (rule 12)
    assert t == 301


def test_a_message_file_replaced_by_garbage_lines_is_refused(chat: Path) -> None:
    day = chat / "2026-11-30.jsonl"
    day.write_bytes(b"garbage\n" * 5)
    error = _refused(chat)
    assert f"{day}: line 1:" in error, error


# -- an error inside an indexed prefix --------------------------------------------------------------


def test_a_broken_line_inside_an_indexed_prefix_names_its_file_and_line_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The index samples a long prefix (its fingerprint), so an edit in the middle of a covered
    message file is found only when that line is read: zoom names the file and the line."""
    agent = tmp_path / "agent"
    chat = chat_dir(agent)
    (chat / "tree").mkdir(parents=True)
    date = "2026-11-30T10:00:00+00:00"
    messages = [Message(i, Kind.USER, f"message {i} " + "z" * 480, date) for i in range(2_400)]
    (chat / "2026-11-30.jsonl").write_bytes(b"".join(encode(m) for m in messages))
    (chat / "tree" / "2026-11-30.jsonl").write_bytes(b"".join(encode(NodeLine((0, m.i), m.text)) for m in messages))
    Store(chat).close()  # the first start writes the index
    assert (chat / INDEX_FILE).exists()
    day = chat / "2026-11-30.jsonl"
    data = bytearray(day.read_bytes())
    middle = len(data) // 2  # between two sampled blocks of the fingerprint
    start = data.rfind(b"\n", 0, middle) + 1
    number = data.count(b"\n", 0, start) + 1
    text = data.find(b"zzz", start)
    data[text : text + 3] = b'z"z'  # a broken line of the same length
    day.write_bytes(bytes(data))
    status = main(["--agent-dir", str(agent), "memory"])
    out, err = capsys.readouterr()
    assert status == 0, err  # the index still fits (the edit is not sampled)
    status = main(["--agent-dir", str(agent), "memory", "zoom", str(number - 1), "1"])
    out, err = capsys.readouterr()
    assert status == 1, (status, err)
    assert err.count("\n") == 1 and f"{day}: line {number}:" in err, err
    with Memory(chat, SMALL) as owner, Memory(chat, SMALL) as client:  # the library: the store's error, owner or client
        assert owner.is_owner and not client.is_owner
        for memory in (owner, client):
            with pytest.raises(StoreError, match=f"{day}: line {number}:"):
                memory.zoom(number - 1, 1)


def test_a_merge_line_naming_a_node_whose_line_was_lost_is_refused_naming_the_merge_line(chat: Path) -> None:
    """A merged node's own line removed (its parent not logged, so no half is missing above it):
    the merge line that names it is the witness."""
    lines = {path: path.read_text().splitlines(keepends=True) for path in sorted((chat / "tree").glob("*.jsonl"))}
    records = [(path, number, json.loads(line)) for path, file_lines in lines.items() for number, line in enumerate(file_lines, 1)]
    logged = {(r["l"], r["i"]) for _, _, r in records if "l" in r}
    for path, number, record in records:
        named = [tuple(n) for n in record.get("merge", []) if n[0] > 0 and (n[0] + 1, n[1] >> 1) not in logged]
        if named:
            break
    else:
        raise AssertionError("the chat has no merge of a node without a logged parent")
    level, i = named[0]
    for where, file_lines in lines.items():
        where.write_text("".join(line for line in file_lines if not line.startswith(f'{{"l":{level},"i":{i},')))
    (chat / "view.json").unlink()
    error = _refused(chat)
    assert f"{path}: line " in error and f"names ({level}, {i}), which no node line logs" in error, error
