"""The seed's tests of the chat memory on disk (memory.md rules 1-13, 25, F1, D1), by their names,
on real files in a temporary directory."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from eukhe.memory import NODE, PLACEHOLDER
from eukhe.memory.chat import Chat, Config, ZoomError
from eukhe.memory.index import TreeLog
from eukhe.memory.durable import DurableChat
from eukhe.memory.importer import import_sessions
from eukhe.memory.lines import CAP, cap_text, conversation_lines, split_text
from eukhe.memory.owner import Memory
from eukhe.memory.records import CorruptLine, IdGap, Kind, MergeLine, Message, NodeLine, StoreError
from eukhe.memory.store import Store
from eukhe.session import Store as Sessions
from eukhe.session import assistant, user

SMALL = Config(jobs=3, ceiling=3_000, floor=1_500, cceiling=1_200, cfloor=600)


class Clock:
    def __init__(self, day: str = "2026-11-30") -> None:
        self.day = day
        self.second = 0

    def __call__(self) -> str:
        self.second += 1
        return f"{self.day}T10:{self.second // 60 % 60:02d}:{self.second % 60:02d}+00:00"


def opened(directory: Path, config: Config = SMALL, clock: Clock | None = None) -> tuple[Store, DurableChat]:
    clock = clock or Clock()
    store = Store(directory, now=clock)
    return store, DurableChat.open(config, store.messages, store.tree, store, clock)


def text_of(i: int, length: int) -> str:
    return (f"m{i} " + "word " * (length // 5 + 1))[:length]


def run_history(durable: DurableChat, r: random.Random, messages: int, late: bool = False) -> None:
    """Messages of mixed sizes; the compactor ends calls (late: only some of them)."""
    for _ in range(messages):
        i = durable.chat.t
        durable.message(text_of(i, r.choice([r.randint(20, 500), r.randint(600, 2_000)])))
        calls = r.randint(0, 1) if late else 8
        for _ in range(calls):
            if durable.chat.running:
                durable.done(0, f"line of {durable.chat.running[0]} " + "x" * r.randint(50, 400))


def view_of(durable: DurableChat) -> list[tuple[int, int]]:
    return list(durable.chat.view.nodes)


# -- rule 1, 2: the log --------------------------------------------------------------------------


def test_appends_go_to_their_day_file_and_read_back_after_a_reload(tmp_path: Path) -> None:
    clock = Clock("2026-11-29")
    store, durable = opened(tmp_path, clock=clock)
    durable.message("first day", Kind.USER)
    durable.message("a reply", Kind.EUKHE)
    clock.day = "2026-11-30"
    durable.message("second day", Kind.TOOL)
    store.close()
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == ["2026-11-29.jsonl", "2026-11-30.jsonl"]
    first = [json.loads(line) for line in (tmp_path / "2026-11-29.jsonl").read_text().splitlines()]
    assert [(m["i"], m["kind"], m["text"], m["size"]) for m in first] == [(0, "user", "first day", 9), (1, "eukhe", "a reply", 7)]
    assert first[0]["date"].startswith("2026-11-29T")
    assert sorted(p.name for p in (tmp_path / "tree").glob("*.jsonl")) == ["2026-11-29.jsonl", "2026-11-30.jsonl"]
    again = Store(tmp_path)
    assert [(m.i, m.kind, m.text) for m in again.messages] == [(0, Kind.USER, "first day"), (1, Kind.EUKHE, "a reply"), (2, Kind.TOOL, "second day")]
    assert [m.date[:10] for m in again.messages] == ["2026-11-29", "2026-11-29", "2026-11-30"]
    again.close()


def test_a_saved_view_loads_back_unchanged(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    run_history(durable, random.Random(1), 80)
    saved = view_of(durable)
    store.close()
    assert json.loads((tmp_path / "view.json").read_text()) == [list(n) for n in saved]
    store, durable = opened(tmp_path)
    assert store.check(durable.chat.view.nodes) == "matches"
    assert view_of(durable) == saved
    store.close()


def test_an_empty_message_is_refused_by_name_and_nothing_is_logged(tmp_path: Path) -> None:
    store, durable = opened(tmp_path / "chat")
    with pytest.raises(ValueError, match="^a message has at least one byte$"):
        durable.message("")
    assert durable.chat.t == 0 and len(store.messages) == 0
    store.close()


def test_a_gap_in_message_ids_is_an_error(tmp_path: Path) -> None:
    lines = [{"i": 0, "kind": "user", "text": "a", "size": 1, "date": "2026-11-30T10:00:00+00:00"}, {"i": 2, "kind": "user", "text": "b", "size": 1, "date": "2026-11-30T10:00:01+00:00"}]
    (tmp_path / "2026-11-30.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(IdGap) as caught:
        Store(tmp_path)
    assert "2026-11-30.jsonl: line 2" in str(caught.value) and "gap" in str(caught.value)


def test_old_talk_lines_read_as_eukhe(tmp_path: Path) -> None:
    line = {"i": 0, "kind": "talk", "text": "an old reply", "size": 12, "date": "2025-01-01T09:00:00+00:00"}
    (tmp_path / "2025-01-01.jsonl").write_text(json.dumps(line) + "\n")
    store = Store(tmp_path)
    assert store.messages == [Message(0, Kind.EUKHE, "an old reply", "2025-01-01T09:00:00+00:00")]
    store.close()


def test_a_torn_last_line_is_skipped_and_terminated(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    durable.message("kept one")
    durable.message("kept two")
    store.close()
    day = tmp_path / "2026-11-30.jsonl"
    whole = day.read_bytes()
    day.write_bytes(whole + b'{"i":2,"kind":"user","text":"cut in the mid')
    store, durable = opened(tmp_path)
    assert [m.text for m in store.messages] == ["kept one", "kept two"]
    assert durable.message("after the crash") == 2
    store.close()
    data = day.read_bytes()
    assert data.startswith(whole + b'{"i":2,"kind":"user","text":"cut in the mid\n{"torn":3}\n')  # nothing rewritten
    again = Store(tmp_path)
    assert [m.text for m in again.messages] == ["kept one", "kept two", "after the crash"]
    again.close()


# -- rules 3, 8, 9, 10: what is logged -------------------------------------------------------------


def test_thoughts_are_never_logged_and_tool_output_is_clipped() -> None:
    output = "head " * 5_000 + "middle " * 10_000 + "tail " * 5_000
    lines = conversation_lines(
        [
            {"type": "user", "text": "please look"},
            {"type": "thinking", "text": "a private thought"},
            {"type": "text", "text": "looking"},
            {"type": "tool_use", "name": "grep", "input": {"pattern": "x"}},
            {"type": "tool_result", "text": output},
            {"type": "report", "name": "Scout", "text": "found it"},
        ]
    )
    assert [k for k, _ in lines] == [Kind.USER, Kind.EUKHE, Kind.TOOL, Kind.ECHO, Kind.WORK]
    assert all("private thought" not in text for _, text in lines)
    assert lines[2][1] == 'grep {"pattern": "x"}'
    echo = lines[3][1]
    assert len(echo) == CAP and echo.startswith("head head") and echo.endswith("tail tail ")
    assert lines[4][1] == "[Scout] found it"


def test_cap_keeps_head_and_tail_within_the_cap() -> None:
    r = random.Random(9)
    for length in [0, 1, CAP - 1, CAP, CAP + 1, 2 * CAP, 10 * CAP + 7]:
        text = "".join(r.choice("ab\nζ𝄞") for _ in range(length))
        capped = cap_text(text)
        assert len(capped) <= CAP
        if length <= CAP:
            assert capped == text
        else:
            head, _, rest = capped.partition("\n[... ")
            number, _, tail = rest.partition(" characters clipped ...]\n")
            assert text.startswith(head) and text.endswith(tail)
            assert len(head) + int(number) + len(tail) == length and len(capped) == CAP
            assert abs(len(head) - len(tail)) <= 1


def test_long_texts_split_into_messages_without_losing_anything(tmp_path: Path) -> None:
    text = ("a line of the paste\n" * 4_000) + "ζ" * 50_000
    assert "".join(split_text(text)) == text and all(len(p) <= CAP for p in split_text(text))
    with Memory(tmp_path / "chat", SMALL) as memory:
        ids = memory.append(text)
        assert len(ids) == len(split_text(text)) > 1 and ids == list(range(len(ids)))
        assert "".join(memory.zoom(i, 1)[0].split("|", 1)[1] for i in ids) == text.replace("\n", " ")
    store = Store(tmp_path / "chat")
    assert "".join(m.text for m in store.messages) == text
    store.close()


# -- rules 11-13: the tree -------------------------------------------------------------------------


def test_short_messages_are_their_own_lines(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    durable.message("short\nmessage")
    durable.message("x" * 100)
    durable.message("y" * (NODE + 1))
    assert durable.chat.running == [(0, 2)]  # only the long one needs a model call
    store.close()
    tree = [json.loads(line) for line in (tmp_path / "tree" / "2026-11-30.jsonl").read_text().splitlines()]
    assert tree == [
        {"l": 0, "i": 0, "text": "short\nmessage", "size": 13},
        {"l": 0, "i": 1, "text": "x" * 100, "size": 100},
        {"l": 1, "i": 0, "text": "short\nmessage\n" + "x" * 100, "size": 114},  # two short lines joined
    ]
    store, durable = opened(tmp_path)
    view = dict(zip(durable.chat.view.nodes, durable.chat.view.sizes))
    assert view[(0, 0)] == 13 and view[(0, 2)] == len(PLACEHOLDER.encode())
    store.close()


def _tree_nodes(directory: Path) -> list[tuple[int, int]]:
    return [r.node for r in TreeLog(directory / "tree", 10**9) if isinstance(r, NodeLine)]


def test_deleting_the_saved_view_reproduces_the_identical_view(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    run_history(durable, random.Random(4), 150, late=True)
    live = (view_of(durable), list(durable.chat.view.sizes), durable.chat.open)
    built = _tree_nodes(tmp_path)
    store.close()
    (tmp_path / "view.json").unlink()
    store, durable = opened(tmp_path)
    assert store.check(durable.chat.view.nodes) == "missing"
    assert (view_of(durable), list(durable.chat.view.sizes), durable.chat.open) == live
    store.close()
    assert _tree_nodes(tmp_path) == built  # rule 13: no node built again
    (tmp_path / "view.json").write_text("[[0, 0]]")
    store, durable = opened(tmp_path)
    assert store.check(durable.chat.view.nodes) == "stale" and view_of(durable) == live[0]
    store.close()


def test_the_view_folds_from_the_logged_merges(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    run_history(durable, random.Random(5), 200)
    merges = [r for r in TreeLog(tmp_path / "tree", 10**9) if isinstance(r, MergeLine)]
    assert any(m.lines for m in merges), "the history must batch"
    live = view_of(durable)
    store.close()
    store, again = opened(tmp_path)
    assert view_of(again) == live
    store.close()
    # and the fold is of the merges: a chat with its merge lines removed folds to messages only
    for path in (tmp_path / "tree").glob("*.jsonl"):
        path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if '"merge"' not in line))
    (tmp_path / "view.json").unlink()
    store, bare = opened(tmp_path, Config(jobs=3, ceiling=10**9, floor=10**9))
    assert view_of(bare) == [(0, i) for i in range(200)]
    store.close()


def test_a_restart_keeps_a_shrinking_view_shrinking(tmp_path: Path) -> None:
    store, durable = opened(tmp_path)
    r = random.Random(6)
    while not durable.chat.open:
        durable.message(text_of(durable.chat.t, r.randint(600, 2_000)))  # no call ends: merges wait
    lines = len(durable.chat.view)
    store.close()
    store, durable = opened(tmp_path)
    assert durable.chat.open, "F1: the restart reads open from the last merge line"
    while durable.chat.running:
        durable.done(0, "a built line " + "z" * 300)
    durable.message("the next message")
    assert durable.chat.batch > 0 and len(durable.chat.view) < lines + 1, "the next message merges further"
    store.close()


# -- rule 5: import --------------------------------------------------------------------------------


def test_sessions_import_oldest_first_without_repeated_pastes(tmp_path: Path) -> None:
    sessions = Sessions(tmp_path / "sessions")
    with sessions.create("20260101T090000-aaaa0001") as first:
        ids = first.conversation().commit([user("plan the garden"), assistant("plant beans")])
    first_id = "20260101T090000-aaaa0001"
    forked = sessions.fork(first_id, ids[-1], new_id="20260102T090000-bbbb0002")
    with sessions.open(forked) as second:
        second.conversation().commit([user("and tomatoes")])
    with sessions.create("20250601T090000-cccc0003") as oldest:
        oldest.conversation().commit([user("hello"), user("plan the garden")])  # the same words, another path
    with Memory(tmp_path / "chat", SMALL) as memory:
        done = import_sessions(memory, sessions)
        notes = [line.split("|", 1)[1] for line in memory.view()]
        assert done.sessions == 3 and done.added == 5
        assert notes == [
            "[session 20250601T090000-cccc0003] user: hello",
            "[session 20250601T090000-cccc0003] user: plan the garden",
            "[session 20260101T090000-aaaa0001] user: plan the garden",
            "[session 20260101T090000-aaaa0001] assistant: plant beans",
            "[session 20260102T090000-bbbb0002] user: and tomatoes",
        ]
        again = import_sessions(memory, sessions)
        assert again.added == 0 and memory.status()["messages"] == 5
        assert again.known == done.added + done.known  # the second import knows every entry
    store = Store(tmp_path / "chat")
    assert {m.kind for m in store.messages} == {Kind.NOTE}
    store.close()


# -- rule 7: one owner -----------------------------------------------------------------------------

OWNER = """
import sys
from pathlib import Path
from eukhe.memory.owner import Memory
memory = Memory(Path(sys.argv[1]))
print("owner" if memory.is_owner else "client", flush=True)
for line in sys.stdin:
    print(memory.append(line.rstrip("\\n"))[0], flush=True)
"""


def _owner(directory: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen([sys.executable, "-c", OWNER, str(directory)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None and child.stdout.readline() == "owner\n"
    return child


def test_a_second_handle_is_a_client_and_takes_over(tmp_path: Path) -> None:
    directory = tmp_path / "chat"
    owner = _owner(directory)
    try:
        assert owner.stdin is not None and owner.stdout is not None
        owner.stdin.write("from the owner\n")
        owner.stdin.flush()
        assert owner.stdout.readline() == "0\n"
        with Memory(directory) as second:
            assert not second.is_owner
            assert second.append("through the socket") == [1]
            assert [line.split("|", 1)[1] for line in second.view()] == ["from the owner", "through the socket"]
            assert second.zoom(1, 1) == ["1+1|through the socket"]
            owner.kill()
            owner.wait()
            assert second.append("after the owner died") == [2]
            assert second.is_owner
            assert second.status()["messages"] == 3
    finally:
        owner.kill()
        owner.wait()
    store = Store(directory)
    assert [m.text for m in store.messages] == ["from the owner", "through the socket", "after the owner died"]
    store.close()


def test_the_owner_answers_a_line_that_is_not_a_call_with_a_value_error(tmp_path: Path) -> None:
    """Rule 7: a client's line that is not JSON, or not a JSON object, gets a ValueError reply
    (the error's name, for the client to raise), and the owner keeps answering."""
    directory = tmp_path / "chat"
    with Memory(directory) as memory:
        assert memory.is_owner and memory.append("hello") == [0]
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)  # a short address, as the owner's
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            raw.connect(f"/proc/self/fd/{fd}/lock")
            with raw.makefile("rb") as replies:
                raw.sendall(b"not json\n")
                first = json.loads(replies.readline())
                raw.sendall(b"[1]\n")
                second = json.loads(replies.readline())
        finally:
            raw.close()
            os.close(fd)
        assert first["error"] == "ValueError" and first["message"].startswith("not JSON: ")
        assert second == {"error": "ValueError", "message": "a call is a JSON object"}
        assert memory.view() == ["0+1|hello"]


def test_an_owner_closing_between_a_call_and_its_reply_still_sends_the_reply(tmp_path: Path) -> None:
    """Issue 30's import counts: an owner that closes after logging a client's append but before
    replying used to cut the connection; the client called again, took the chat over and heard
    that its key was already logged (added 0), so concurrent imports under-reported. Here the
    close starts exactly there; the client must hear that its own call logged the message."""
    directory = tmp_path / "chat"
    owner = Memory(directory)
    assert owner.is_owner and owner.core is not None
    core = owner.core
    serve = core.serve
    closer = threading.Thread(target=owner.close)

    def serve_then_close(request: dict[str, object]) -> dict[str, object] | None:
        reply = serve(request)
        closer.start()
        while not core.closed:  # the close has begun: it has cut or waits on this reply
            time.sleep(0.001)
        return reply

    core.serve = serve_then_close  # type: ignore[method-assign]
    try:
        with Memory(directory) as client:
            assert not client.is_owner
            assert client.appended("logged once", Kind.NOTE, "import:k") == ([0], 1)
            closer.join()
            assert client.status()["messages"] == 1 and client.is_owner  # took over; nothing doubled
    finally:
        if closer.ident is None:
            owner.close()
        else:
            closer.join()


def test_a_stale_socket_is_taken_over(tmp_path: Path) -> None:
    directory = tmp_path / "chat"
    directory.mkdir()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(directory / "lock"))  # a socket file nobody listens on: its owner is gone
    stale.close()
    assert (directory / "lock").exists()
    with Memory(directory) as memory:
        assert memory.is_owner
        assert memory.append("hello") == [0]
        with Memory(directory) as client:
            assert not client.is_owner and client.view() == ["0+1|hello"]


def test_a_refused_call_raises_its_own_kind_through_owner_and_client(tmp_path: Path) -> None:
    """The owner answers a refusal with the error's name (rule 7): each handle raises that kind
    again, with the owner's words."""
    directory = tmp_path / "chat"
    with Memory(directory) as owner:
        owner.append("hello")
        owner.append("again")
        with Memory(directory) as client:
            assert owner.is_owner and not client.is_owner
            for handle in (owner, client):
                with pytest.raises(ZoomError, match=r"^id=1 is not a multiple of n=2$"):
                    handle.zoom(1, 2)
                with pytest.raises(ValueError, match=r"^append needs a text of at least one character$") as caught:
                    handle.append("", key="k")
                assert type(caught.value) is ValueError


def test_a_message_zoomed_whole_comes_with_its_images(tmp_path: Path) -> None:
    """Rule 53: zoom(id, 1) gives the message whole with its images (``images/<id>/``), for the
    owner and for a client; a zoom of a merged line has none; an image of no message, or a name
    taken twice, is refused."""
    directory = tmp_path / "chat"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    with Memory(directory, SMALL) as memory:
        assert memory.append("look at this") == [0] and memory.append("and this") == [1]
        saved = memory.save_image(0, "screen.png", png)
        assert saved == directory / "images" / "0" / "screen.png" and saved.read_bytes() == png
        zoomed = memory.zoom(0, 1)
        assert zoomed == ["0+1|look at this"] and zoomed.images == [saved]
        assert memory.zoom(1, 1).images == [] and memory.zoom(0, 2).images == []
        with pytest.raises(ValueError, match="no message 2"):
            memory.save_image(2, "late.png", png)
        with pytest.raises(StoreError, match="already has an image"):
            memory.save_image(0, "screen.png", png)
        with Memory(directory, SMALL) as client:
            assert not client.is_owner
            seen = client.zoom(0, 1)
            assert seen == ["0+1|look at this"] and seen.images == [saved]
            assert client.save_image(1, "b.png", b"x").read_bytes() == b"x"
    with Memory(directory, SMALL) as again:  # kept across a restart
        assert again.zoom(0, 1).images == [saved] and [p.name for p in again.zoom(1, 1).images] == ["b.png"]


def test_a_crash_while_terminating_a_torn_tail_loses_nothing(tmp_path: Path) -> None:
    """Found by the crash campaign: the writer terminating a torn tail is killed inside that write."""
    store, durable = opened(tmp_path)
    durable.message("kept")
    store.close()
    day = tmp_path / "2026-11-30.jsonl"
    whole = day.read_bytes()
    day.write_bytes(whole + b'{"i":1,"kind":"us' + b'\n{"tor')  # torn, then a torn termination
    store, durable = opened(tmp_path)
    assert [m.text for m in store.messages] == ["kept"]
    assert durable.message("next") == 1
    store.close()
    assert day.read_bytes() == whole + b'{"i":1,"kind":"us\n{"tor\n{"torn":2}\n' + day.read_bytes().split(b'{"torn":2}\n', 1)[1]
    again = Store(tmp_path)
    assert [m.text for m in again.messages] == ["kept", "next"]
    again.close()


def test_a_tree_line_with_a_wrong_key_before_a_good_size_is_named_by_its_line(tmp_path: Path) -> None:
    """Rules 6, 13: a node line whose first fields are not the writer's (a key "L", "x") but whose
    end is a good ``"size":n}`` is not a node: reading the tree names its line."""
    for line in ['{"L":0,"i":0,"text":"abc","size":3}', '{"l":0,"x":0,"text":"abc","size":3}']:
        tree = tmp_path / line[2] / "tree"
        tree.mkdir(parents=True)
        (tree / "2026-11-30.jsonl").write_text(line + "\n" + '{"l":0,"i":1,"text":"de","size":2}\n')
        with pytest.raises(CorruptLine, match=r"2026-11-30\.jsonl: line 1: unknown fields"):
            TreeLog(tree, 10)
