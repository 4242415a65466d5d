"""The seed's tests of a turn (memory.md §6, rules 46-58, D10, D11), by their names, over real
HTTP on loopback (spec/loopback.py) for the OpenAI chat completions and Anthropic Messages APIs.
No mock of httpx: the wire clients talk to a real server; the chat is a real owner on disk."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from turn_support import APIS, Router, compactor_for, is_compaction, leading, logged, long_text, model_for, run, turns_for, turns_of, user, view_of

from eukhe.memory import NODE, PLACEHOLDER
from eukhe.memory.lines import CAP
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.memory.text import cut, flatten
from eukhe.inference.wire import client_for
from eukhe.inference.wire.events import Event, TextDelta
from eukhe.inference.wire.plan import Request
from eukhe.memory.turn import Deadline, Turns, local_date
from spec.loopback import Call, LoopbackServer, Recorded, Stall, Stream, Text, Thinking, Wait


@pytest.fixture
def memory(chat_dir: Path) -> Iterator[Memory]:
    with Memory(chat_dir) as owned:
        assert owned.is_owner
        yield owned


def covered(view: str) -> list[int]:
    """The messages a rendered view's lines cover, in order (the oracle of rule 14)."""
    out: list[int] = []
    for line in view.splitlines()[1:-1]:
        head = re.match(r"(\d+)\+(\d+)\|", line)
        assert head is not None, line
        first, n = int(head.group(1)), int(head.group(2))
        out.extend(range(first, first + n))
    return out


async def waiting(memory: Memory) -> None:
    """Until the planner knows a turn waits (D5)."""
    core = memory.core
    assert core is not None
    for _ in range(2000):
        with core.lock:
            if core.chat.chat.waiting:
                return
        await asyncio.sleep(0.005)
    raise AssertionError("the turn never started waiting")


# -- rule 47, D10 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_a_turn_gets_the_view_by_its_deadline_when_the_model_never_answers(memory: Memory, server: LoopbackServer, api: str) -> None:
    """The live compactor's calls reach the server and never get an answer (a stall); the turn
    takes the view at its deadline: the line not summarized shows its message cut to 512 bytes."""
    big = long_text("the big one", 2_000)
    router = Router(server, lambda recorded: Stream([Stall()]), [Stream([Text("answered")])])
    expire = threading.Event()

    async def main() -> None:
        compactor = compactor_for(memory, server, api)
        turns = turns_for(memory, server, api, compactor=compactor)
        compactor.message("hello")
        compactor.message(big)  # over 512 bytes: its line needs a model call, which never answers
        task = asyncio.create_task(turns.turn("what did I say?", deadline=Deadline(3600.0, event=expire)))
        await waiting(memory)
        await asyncio.to_thread(server.stalled.wait, 30)
        assert not task.done() and router.compactions and len(router.turns) == 1  # the turn has not called yet
        expire.set()
        outcome = await task
        assert outcome.pinned.waited and outcome.pinned.cut == (1,)
        assert outcome.reply == "answered"
        await compactor.close()
        server.release()

    run(main())
    turn = [r for r in server.requests if not is_compaction(r)][0]
    view = view_of(turn)
    assert PLACEHOLDER not in view
    assert view.splitlines()[1:3] == ["0+1|hello", f"1+1|{flatten(cut(big, NODE))}"]
    assert covered(view) == [0, 1]
    core = memory.core
    assert core is not None and not core.chat.chat.waiting  # the turn took the view as it was (go)


def test_a_turn_deadline_comes_from_its_clock(memory: Memory, server: LoopbackServer) -> None:
    user(memory, long_text("unsummarized", 1_000))
    server.script(Stream([Text("ok")]))
    now = [100.0]

    def clock() -> float:
        return now[0]

    turns = turns_for(memory, server, APIS[0], settle_seconds=20.0, clock=clock)

    async def main() -> None:
        task = asyncio.create_task(turns.turn("go on"))
        await waiting(memory)
        now[0] = 119.9
        await asyncio.sleep(0.05)
        assert not task.done()
        now[0] = 120.0
        outcome = await task
        assert outcome.pinned.cut == (0,)

    run(main())
    assert PLACEHOLDER not in view_of(server.wait_requests(1)[0])


def test_a_settled_view_never_shows_a_placeholder_while_another_client_appends(memory: Memory, chat_dir: Path, server: LoopbackServer) -> None:
    """The live compactor builds lines over loopback while another client appends long and short
    messages; the turn waits (no deadline) until its view settles and sends no placeholder."""
    api = APIS[1]
    gate = threading.Event()
    router = Router(server, lambda recorded: Stream([Wait(gate), Text(f"summary {len(router.compactions)}")]), [Stream([Text("seen")])])

    def other_client() -> None:
        with Memory(chat_dir) as client:
            assert not client.is_owner
            for k in range(12):
                client.append(long_text(f"other {k}", 700) if k % 2 else f"short {k}")
        gate.set()  # the compactor's calls answer once the other client is done

    async def main() -> None:
        compactor = compactor_for(memory, server, api)
        turns = turns_for(memory, server, api, compactor=compactor)
        compactor.message(long_text("first long", 1_500))
        task = asyncio.create_task(turns.turn("and now?", deadline=Deadline(3600.0)))
        await waiting(memory)
        thread = threading.Thread(target=other_client)
        thread.start()
        outcome = await task
        await asyncio.to_thread(thread.join)
        assert outcome.pinned.cut == () and outcome.pinned.waited
        await compactor.close()

    run(main())
    turn = [r for r in server.requests if not is_compaction(r)][0]
    view = view_of(turn)
    assert PLACEHOLDER not in view
    mine = [i for i, (kind, text) in enumerate(logged(chat_dir)) if text == "and now?"]
    assert covered(view) == list(range(mine[0]))  # exactly the messages before the turn's own


# -- rule 46 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_a_message_sent_during_a_call_joins_it_between_tool_calls(memory: Memory, chat_dir: Path, server: LoopbackServer, api: str) -> None:
    user(memory, "remember the number 42")
    go = threading.Event()
    server.script(
        Stream([Wait(go), Text("Let me look."), Call("zoom", '{"id": 0, "n": 1}', "call_z")], stop="toolUse"),
        Stream([Thinking("both read"), Text("It is 42, and noted.")]),
    )
    turns = turns_for(memory, server, api)

    shown: list[tuple[str, str]] = []

    async def main() -> None:
        assert not turns.send("too early")  # no call runs: the caller starts a turn with it
        task = asyncio.create_task(turns.turn("what was the number?", show=lambda what, text: shown.append((what, text))))
        await asyncio.to_thread(server.wait_requests, 1)
        assert turns.send("and write it down")
        go.set()
        outcome = await task
        assert outcome.joined == 1 and outcome.steps == 2

    run(main())
    assert [(what, text) for what, text in shown if what in ("tool", "result", "joined")] == [
        ("tool", 'zoom {"id": 0, "n": 1}'),
        ("result", "0+1|remember the number 42"),
        ("joined", "and write it down"),
    ]
    assert ("thinking", "both read") in shown and ("text", "It is 42, and noted.") in shown  # each under its own name
    second = turns_of(server.wait_requests(2)[1])
    assert [role for role, _ in second[-4:]] == ["assistant", "call", "tool", "user"]
    assert second[-2][1] == "0+1|remember the number 42"
    assert second[-1] == ("user", "and write it down")
    assert logged(chat_dir)[1:] == [
        ("user", "what was the number?"),
        ("eukhe", "Let me look."),
        ("tool", 'zoom {"id": 0, "n": 1}'),
        ("echo", "0+1|remember the number 42"),
        ("user", "and write it down"),
        ("eukhe", "It is 42, and noted."),
    ]


class _SaysFine:
    """A model of the turn's protocol that answers every call "Fine." and reports no stop."""

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        yield TextDelta("Fine.")


def test_a_call_that_reports_no_stop_leaves_the_stop_empty(memory: Memory) -> None:
    outcome = run(Turns(memory, _SaysFine()).turn("how are you?"))
    assert outcome.reply == "Fine." and outcome.stop == "" and outcome.steps == 1


@pytest.mark.parametrize("thinking", [None, "high"])
def test_every_call_of_a_turn_asks_for_its_thinking_level(memory: Memory, thinking: str | None) -> None:
    outcome = run(Turns(memory, _SaysFine(), thinking=thinking).turn("think it over"))
    assert [request.thinking for request in outcome.requests] == [thinking]


# -- rules 48-51, D11 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_a_run_sends_the_pinned_view_and_its_own_messages_and_logs_them(memory: Memory, chat_dir: Path, server: LoopbackServer, api: str) -> None:
    for k in range(6):
        user(memory, f"earlier {k}")
    server.script(
        Stream([Call("date", '{"id": 2}', "c1")], stop="toolUse"),
        Stream([Text("Step two."), Call("zoom", '{"id": 4, "n": 1}', "c2")], stop="toolUse"),
        Stream([Text("All done.")]),
        Stream([Text("Second turn.")]),
    )
    turns = turns_for(memory, server, api, now=lambda: "2026-11-30 18:00")
    first = run(turns.turn("check the dates"))
    assert first.steps == 3 and first.reply == "All done."
    requests = server.wait_requests(3)
    views = {view_of(r) for r in requests}
    assert len(views) == 1  # one pinned view for the whole run, though the run logged lines
    view = views.pop()
    assert covered(view) == list(range(6))
    head = leading(requests[0])
    assert head.index("</chat>") < head.index("Now: 2026-11-30 18:00") < head.index("Turn:") < head.index("check the dates")
    assert "Now:" not in requests[0].body.get("system", "") and "2026" not in str(requests[0].body.get("system", ""))
    for earlier, later in zip(requests, requests[1:]):
        assert turns_of(later)[: len(turns_of(earlier))] == turns_of(earlier)  # a run only appends
    if api == "anthropic-messages":  # cache marks: the view's last whole block of 4 lines, the request end (rule 29)
        blocks = [b for m in requests[1].body["messages"] for b in m["content"]]
        marked = [k for k, b in enumerate(blocks) if "cache_control" in b]
        assert marked == [0, len(blocks) - 1] and blocks[0]["text"].endswith("3+1|earlier 3\n")
    assert logged(chat_dir)[6:] == [
        ("user", "check the dates"),
        ("tool", 'date {"id": 2}'),
        ("echo", local_date(memory.date(2))),
        ("eukhe", "Step two."),
        ("tool", 'zoom {"id": 4, "n": 1}'),
        ("echo", "4+1|earlier 4"),
        ("eukhe", "All done."),
    ]
    run(turns.turn("next"))
    fourth = server.wait_requests(4)[3]
    assert [role for role, _ in turns_of(fourth)] == ["user"] * len(turns_of(fourth))  # nothing carried over (rule 50)
    assert covered(view_of(fourth)) == list(range(13))  # the first turn's lines come back as the view


# -- rules 52, 53, 56 ---------------------------------------------------------------------------------


def test_dates_read_as_local_date_and_time(chat_dir: Path, server: LoopbackServer) -> None:
    before = os.environ.get("TZ")
    try:
        os.environ["TZ"] = "Asia/Kolkata"
        time.tzset()
        with Memory(chat_dir) as memory:
            user(memory, "logged in India")
            stored = memory.date(0)
            assert stored.endswith("+05:30")
            os.environ["TZ"] = "America/New_York"
            time.tzset()
            server.script(Stream([Call("date", '{"id": 0}', "d")], stop="toolUse"), Stream([Text("ok")]))
            run(turns_for(memory, server, APIS[1]).turn("when was that?"))
        answered = turns_of(server.wait_requests(2)[1])[-1][1]
        from datetime import datetime
        from zoneinfo import ZoneInfo

        moment = datetime.fromisoformat(stored).astimezone(ZoneInfo("America/New_York"))
        assert answered.startswith(moment.strftime("%Y-%m-%d %H:%M:%S %A"))
        assert answered.endswith("UTC-05:00)") or answered.endswith("UTC-04:00)")
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.parametrize("api", APIS)
def test_zoom_and_date_keep_the_view(memory: Memory, server: LoopbackServer, api: str) -> None:
    for k in range(8):
        user(memory, f"line {k}")
    memory.save_image(3, "shot.png", b"\x89PNG fake")
    before = memory.view()
    server.script(
        Stream([Call("zoom", '{"id": 0, "n": 8}', "a"), Call("zoom", '{"id": 3, "n": 1}', "b"), Call("date", '{"id": 1}', "c")], stop="toolUse"),
        Stream([Call("zoom", '{"id": 3, "n": 2}', "d"), Call("zoom", '{"id": "0"}', "e"), Call("date", '{"id": 99}', "f")], stop="toolUse"),
        Stream([Text("seen")]),
    )
    run(turns_for(memory, server, api).turn("look around"))
    requests = server.wait_requests(3)
    assert view_of(requests[0]) == view_of(requests[1]) == view_of(requests[2])
    assert memory.view()[: len(before)] == before  # the tools changed no line of the view
    results = [text for role, text in turns_of(requests[2]) if role == "tool"]
    assert results[0].splitlines()[0].startswith("0+4|")
    assert results[1].splitlines()[0] == "3+1|line 3" and results[1].splitlines()[1].endswith("shot.png")
    assert results[2] == local_date(memory.date(1))
    assert results[3].startswith("error: ") and "multiple of n=2" in results[3]
    assert results[4] == "0+1|line 0"
    assert results[5].startswith("error: ")


def images_of(recorded: Recorded) -> list[tuple[str, bytes]]:
    """Every image a request carries, in order, as (media type, bytes): Anthropic's image blocks
    (in tool results or user turns), OpenAI's image_url parts with data URLs."""
    import base64

    out: list[tuple[str, bytes]] = []

    def walk(content: object) -> None:
        if not isinstance(content, list):
            return
        for block in content:
            if block.get("type") == "image":
                out.append((block["source"]["media_type"], base64.b64decode(block["source"]["data"])))
            elif block.get("type") == "image_url":
                head, data = block["image_url"]["url"].split(",", 1)
                out.append((head.removeprefix("data:").removesuffix(";base64"), base64.b64decode(data)))
            elif block.get("type") == "tool_result":
                walk(block.get("content"))

    for message in recorded.body["messages"]:
        walk(message.get("content"))
    return out


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.mark.parametrize("api", APIS)
def test_the_zoom_tool_gives_a_message_with_its_images(memory: Memory, server: LoopbackServer, api: str) -> None:
    user(memory, "the screenshot of the failure")
    memory.save_image(0, "shot.png", PNG)
    memory.save_image(0, "trace.bin", b"not an image a model reads")
    server.script(Stream([Call("zoom", '{"id": 0, "n": 1}', "a"), Call("date", '{"id": 0}', "b")], stop="toolUse"), Stream([Text("seen")]))
    seeing = client_for(replace(model_for(server, api), input=("text", "image")), timeout=30.0)
    run(Turns(memory, seeing).turn("what does it show?"))
    second = server.wait_requests(2)[1]
    assert images_of(second) == [("image/png", PNG)]
    zoomed = [text for role, text in turns_of(second) if role == "tool"][0]
    assert zoomed.splitlines()[0] == "0+1|the screenshot of the failure"
    assert [line.rsplit("/", 1)[-1] for line in zoomed.splitlines()[1:]] == ["shot.png", "trace.bin"]
    if api == "openai-completions":  # a tool message carries text only: the images follow both results
        roles = [m["role"] for m in second.body["messages"]]
        assert roles[-3:] == ["tool", "tool", "user"]
        assert [part["type"] for part in second.body["messages"][-1]["content"]] == ["image_url"]


@pytest.mark.parametrize("api", APIS)
def test_a_model_that_takes_text_only_gets_the_image_paths_and_a_note(memory: Memory, server: LoopbackServer, api: str) -> None:
    user(memory, "the screenshot of the failure")
    memory.save_image(0, "shot.png", PNG)
    server.script(Stream([Call("zoom", '{"id": 0, "n": 1}', "a")], stop="toolUse"), Stream([Text("seen")]))
    run(turns_for(memory, server, api).turn("what does it show?"))
    second = server.wait_requests(2)[1]
    assert images_of(second) == []
    zoomed = [text for role, text in turns_of(second) if role == "tool"][0]
    assert zoomed.splitlines()[1].endswith("shot.png") and zoomed.splitlines()[2] == "(1 image not sent: the model takes text only)"


# -- rules 54, 57, 58 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_zoom_by_name_gives_an_agents_whole_chat(memory: Memory, server: LoopbackServer, api: str) -> None:
    user(memory, "the key is under the mat")
    server.script(
        Stream([Text("Looking."), Call("zoom", '{"id": 0, "n": 1}', "s1")], stop="toolUse"),
        Stream([Text("Found: under the mat.")]),
        Stream([Call("zoom", '{"id": "Scout"}', "m1"), Call("zoom", '{"id": "Nobody"}', "m2")], stop="toolUse"),
        Stream([Text("Scout found it.")]),
    )
    turns = turns_for(memory, server, api)
    run(turns.subagent("Scout", "find the key"))
    run(turns.turn("what did Scout do?"))
    results = [text for role, text in turns_of(server.wait_requests(4)[3]) if role == "tool"]
    assert results[0].splitlines() == [
        "user: find the key",
        "eukhe: Looking.",
        'tool: zoom {"id": 0, "n": 1}',
        "echo: 0+1|the key is under the mat",
        "eukhe: Found: under the mat.",
    ]
    assert results[1].startswith("error: ") and "Nobody" in results[1]


@pytest.mark.parametrize("api", APIS)
def test_a_subagent_pins_one_view_for_its_conversation_and_logs_nothing(memory: Memory, chat_dir: Path, server: LoopbackServer, api: str) -> None:
    for k in range(5):
        user(memory, f"fact {k}")
    go = threading.Event()
    server.script(
        Stream([Wait(go), Call("zoom", '{"id": 2, "n": 1}', "s1")], stop="toolUse"),
        Stream([Text("Report: fact 2 holds.")]),
    )
    turns = turns_for(memory, server, api)

    async def main() -> None:
        task = asyncio.create_task(turns.subagent("Checker", "check fact 2"))
        await asyncio.to_thread(server.wait_requests, 1)
        user(memory, "a message while the agent works")
        go.set()
        await task

    run(main())
    requests = server.wait_requests(2)
    assert view_of(requests[0]) == view_of(requests[1])
    assert covered(view_of(requests[1])) == list(range(5))
    head = leading(requests[0])
    assert head.endswith("check fact 2") and "Turn:" not in head  # view, then its task, unmarked (D11)
    assert logged(chat_dir)[5:] == [("user", "a message while the agent works"), ("work", "[Checker] Report: fact 2 holds.")]


@pytest.mark.parametrize("api", APIS)
def test_agent_replies_are_logged_as_work_and_owed_rows_are_not(memory: Memory, chat_dir: Path, server: LoopbackServer, api: str) -> None:
    """The agent's own replies, calls and results (the rows the terminal shows while its report
    is owed) stay in its log; its final reply joins the master's running call and is logged once,
    as one work message."""
    user(memory, "start")
    master_go = threading.Event()
    shown: list[tuple[str, str]] = []
    turns = turns_for(memory, server, api)

    def answer(recorded: Recorded) -> Stream:
        said = turns_of(recorded)
        text = " ".join(t for _, t in said)
        if "do the chore" in text:
            if not any(role == "tool" for role, _ in said):
                return Stream([Text("Working on it."), Call("zoom", '{"id": 0, "n": 1}', "a1")], stop="toolUse")
            return Stream([Text("Chore done.")])
        if "[Helper] Chore done." in text:
            return Stream([Text("Helper reported.")])
        return Stream([Wait(master_go), Call("date", '{"id": 0}', "m1")], stop="toolUse")

    server.responder = answer

    async def main() -> None:
        master = asyncio.create_task(turns.turn("run the helper"))
        await asyncio.to_thread(server.wait_requests, 1)
        await turns.subagent("Helper", "do the chore", show=lambda what, text: shown.append((what, text)))
        master_go.set()
        outcome = await master
        assert outcome.reply == "Helper reported." and outcome.joined == 1

    run(main())
    rows = logged(chat_dir)
    assert rows.count(("work", "[Helper] Chore done.")) == 1
    assert not any("Working on it." in text for _, text in rows)
    assert ("text", "Working on it.") in shown and ("report", "[Helper] Chore done.") in shown
    assert rows[-1] == ("eukhe", "Helper reported.")


# -- rule 55 ------------------------------------------------------------------------------------------


def test_long_user_texts_are_logged_as_several_messages(memory: Memory, chat_dir: Path, server: LoopbackServer) -> None:
    text = "".join(f"line {k} of a very long paste\n" for k in range(3_000))
    assert len(text) > 2 * CAP
    server.script(Stream([Text("read it all")]))
    outcome = run(turns_for(memory, server, APIS[0], settle_seconds=0.0).turn(text))
    pages = len(outcome.pinned.ids)
    assert pages >= 3 and outcome.pinned.ids == tuple(range(pages))
    rows = logged(chat_dir)
    assert [kind for kind, _ in rows[:pages]] == ["user"] * pages and "".join(t for _, t in rows[:pages]) == text
    assert all(len(t) <= CAP for _, t in rows[:pages])
    assert leading(server.wait_requests(1)[0]).endswith(text)  # the message goes whole after the view


# -- errors -------------------------------------------------------------------------------------------


def test_a_turn_needs_the_owner_and_text(memory: Memory, chat_dir: Path, server: LoopbackServer) -> None:
    from eukhe.memory.turn import TurnError

    with Memory(chat_dir) as client:
        with pytest.raises(TurnError, match="owns the chat"):
            turns_for(client, server, APIS[0])
    turns = turns_for(memory, server, APIS[0])
    with pytest.raises(ValueError, match="some text"):
        run(turns.turn("   "))
    with pytest.raises(ValueError, match="agent's name"):
        run(turns.subagent("9lives", "x"))
