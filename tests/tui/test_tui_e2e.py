"""The terminal UI as a person uses it: Textual's pilot presses keys and reads the screen of the
app (eukhe.tui), which is a client of a real agent process (``eukhe agent serve``) running the
real turn loop against the loopback model server over HTTP."""

from __future__ import annotations

import asyncio
import re
import subprocess
import threading
from typing import Any
from collections.abc import Callable
from pathlib import Path

from textual.widgets import OptionList
from agent_support import Agent, of_type
from loopback_models import write_loopback_models
from tui_support import attached, screen_text, screenshot, session_document, until

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import Store
from eukhe.tui import EukheApp
from eukhe.tui.picker import ModelPicker
from spec.loopback import Call, LoopbackServer, Stall, Stream, Text, Wait

SIZE = (100, 30)


def app_of(home: Path) -> EukheApp:
    return EukheApp(home, Store(home / "sessions").path("s1"), "s1", home.parent)


def serving(agents: Callable[[], Agent]) -> Agent:
    agent = agents()
    agent.until(of_type("state"))
    return agent


async def type_text(pilot: object, text: str) -> None:
    """Type ``text`` key by key, as a person does."""
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)  # type: ignore[attr-defined]


async def paste(pilot: object, text: str) -> None:
    """Put ``text`` into the draft at the cursor, as a paste does (key by key costs a frame each)."""
    pilot.app.draft.insert(text)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


def test_a_turn_streams_into_the_transcript_and_its_tool_call_shows(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("It says **alpha**.")]))
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            assert "model loop/loop-model" in app.status_text and "thinking " in app.status_text
            await type_text(pilot, "what does a.txt say?")
            await pilot.press("enter")
            await until(pilot, lambda: any(isinstance(e, p.TurnEndEvent) for e in app.seen), "the turn's end")
            await pilot.pause()
            shown = app.transcript.text
            assert "> what does a.txt say?" in shown
            assert 'tool read {"path": "a.txt"}' in shown and re.search(r"result ok\s+1\s+alpha", shown)
            assert "It says **alpha**." in shown
            assert app.draft.text == ""
            # the screen catches up with the transcript within a few frames: wait for the tool
            # call's block (its result ok) to be drawn, then save the screen
            await until(pilot, lambda: '[ok] read {"path": "a.txt"}' in screen_text(app), "the tool call's block on the screen")
            svg = screenshot(app, "turn")
            assert app.status_text in svg
            assert '[ok] read {"path": "a.txt"}' in svg

    asyncio.run(main())
    assert agent.end() == 0


def test_a_bind_of_binds_cfg_toggles_a_setting_of_the_session(home: Path, agents: Callable[[], Agent]) -> None:
    (home / "binds.cfg").write_text('bind f5 "toggle retry.enabled"\nbind ctrl+t ""\nbind f6 "action app.tools.expand"\n', encoding="utf-8")
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await pilot.press("f5")
            await until(pilot, lambda: any(isinstance(e, p.CvarResultEvent) for e in app.seen), "the cvar reply")
            result = next(e for e in app.seen if isinstance(e, p.CvarResultEvent))
            assert [(o.command, o.outcome, o.refused) for o in result.outcomes] == [("toggle retry.enabled", "ok", False)]
            assert "toggle retry.enabled: ok" in app.transcript.text
            assert session_document(home, "eukhe.cvar.agent")["sets"] == [["retry.enabled", False]]  # the agent's value flipped
            before = app.transcript.text
            await pilot.press("ctrl+t")  # its default (app.thinking.toggle) is turned off by an empty bind
            await pilot.pause()
            assert app.transcript.text == before and app.transcript.show_thinking is False
            await pilot.press("f6")  # an action runs in the client
            assert app.transcript.tools_expanded is True

    asyncio.run(main())
    assert agent.end() == 0


def test_a_bind_that_runs_a_session_alias_sends_it_and_runs_its_actions(home: Path, agents: Callable[[], Agent]) -> None:
    (home / "binds.cfg").write_text('bind f7 "flip"\n', encoding="utf-8")
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await paste(pilot, '/alias flip "toggle compaction.enabled; action app.tools.expand"')
            await pilot.press("enter")
            await until(pilot, lambda: "alias flip" in app.transcript.text, "the alias's reply")
            await pilot.press("f7")
            await until(pilot, lambda: app.transcript.tools_expanded, "the alias's action")
            assert "toggle compaction.enabled: ok" in app.transcript.text
            assert ["compaction.enabled", False] in session_document(home, "eukhe.cvar.agent")["sets"]

    asyncio.run(main())
    assert agent.end() == 0


def test_remind_and_force_go_on_the_director_stack(home: Path, agents: Callable[[], Agent]) -> None:
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await paste(pilot, "/remind run the tests")
            await pilot.press("enter")
            await until(pilot, lambda: "reminder" in app.status.stack, "the reminder on the stack")
            await paste(pilot, "/force read")
            await pilot.press("enter")
            await until(pilot, lambda: "forced" in app.status.stack, "the forced call on the stack")
            assert "directors reminder,forced" in app.status_text
            client = await AgentClient.connect(p.socket_path(home, Store(home / "sessions").path("s1")))
            state = await client.next()
            await client.close()
            assert isinstance(state, p.StateEvent)
            assert [(layer["kind"], layer.get("data", {}).get("text")) for layer in state.directors][0] == ("reminder", "run the tests")

    asyncio.run(main())
    assert agent.end() == 0


def test_the_model_picker_lists_the_catalog_and_switches_the_model(home: Path, agents: Callable[[], Agent]) -> None:
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await type_text(pilot, "/model")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker")
            picker = app.screen
            assert isinstance(picker, ModelPicker)
            await pilot.pause()
            listed = [str(option.id) for option in picker.query_one(OptionList).options]
            assert listed == [f"{m.provider}/{m.id}" for m in picker.catalog.models]
            assert {"loop/loop-model", "other/other-model"} <= set(listed)
            picker.query_one(OptionList).highlighted = listed.index("other/other-model")
            await pilot.press("enter")
            await until(pilot, lambda: app.status.model == "other/other-model", "the switched model")
            assert "model other/other-model" in app.status_text
            await pilot.press("ctrl+l")  # the default bind of app.model.select
            await until(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker again")
            await pilot.press("escape")  # app.interrupt: the picker runs its own action, closing
            await until(pilot, lambda: not isinstance(app.screen, ModelPicker), "the picker closed")
            assert app.status.model == "other/other-model"

    asyncio.run(main())
    assert agent.end() == 0


def test_two_clients_see_the_same_turn_and_a_late_one_catches_up(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("Half "), Wait(gate), Text("done.")]))
    agent = serving(agents)
    agent.send({"v": 1, "type": "turn", "text": "go on"})  # another client (the agent serve relay) starts the turn
    agent.until(lambda e: e["type"] == "delta" and e["text"] == "Half ")

    async def main() -> None:
        app = app_of(home)  # attaches mid-turn
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await until(pilot, lambda: "Half" in app.transcript.text, "the turn so far")
            assert "> go on" in app.transcript.text and app.status.running and "running" in app.status_text
            gate.set()
            await until(pilot, lambda: any(isinstance(e, p.TurnEndEvent) for e in app.seen), "the turn's end")
            assert "Half done." in app.transcript.text and not app.status.running

    asyncio.run(main())
    assert agent.until(of_type("turn_end"))["reason"] == "answered"  # the first client saw the same turn end
    assert agent.end() == 0


def test_slash_commands_complete_and_answer_with_rows(home: Path, agents: Callable[[], Agent]) -> None:
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")

            async def run(line: str, shows: str) -> None:
                await paste(pilot, line)
                await pilot.press("enter")
                await until(pilot, lambda: shows in app.transcript.text, f"{shows!r} after {line}")

            await type_text(pilot, "/ti")
            await pilot.press("tab")  # completion: one match
            assert app.draft.text == "/tier "
            await type_text(pilot, "flex")
            await pilot.press("enter")
            await until(pilot, lambda: app.status.tier == "flex", "the tier")
            assert "tier flex" in app.status_text
            await run("/effort", "thinking level ")
            await run("/set retry.maxRetries 5", "set retry.maxRetries 5: ok")
            await run("/set retry.maxRetries lots", "CvarError")
            await run("/set retry.maxRetries 4 --global", "set retry.maxRetries 4 (global): ok")
            await run("/toggle stt.enabled", "toggle stt.enabled: ok")
            await run("/cvar save", "/cvar save: ")
            await run("/memory view", "this session is not the chat")  # /memory is the chat's (eukhe chat)
            await run("/fork x", "/fork x: an entry id is a whole number")  # /new and /fork: test_tui_sessions
            await run("/frobnicate", "unknown command /frobnicate")
            await run("/help", "/quit: leave")
            (home / "binds.cfg").write_text("this is not a bind\n", encoding="utf-8")
            await run("/reload", "binds.cfg read:")
            assert "binds.cfg:1" in app.transcript.text  # its warning shows
            await type_text(pilot, "one")
            await pilot.press("ctrl+j")  # editor.newline
            await type_text(pilot, "two")
            assert app.draft.text == "one\ntwo"
            await pilot.press("ctrl+c")  # app.interrupt; editor.clear
            assert app.draft.text == ""
            await run("/quit", "")
            await until(pilot, lambda: app.return_code == 0, "the app's exit")

    asyncio.run(main())
    assert (home / "agents" / "main.cfg").exists()
    assert agent.end() == 0


def test_enter_steers_the_running_turn_and_alt_enter_queues_a_follow_up(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(
        Stream([Text("Looking "), Wait(gate), Call("read", '{"path": "a.txt"}')], stop="toolUse"),
        Stream([Text("Done.")]),
        Stream([Text("Summed up.")]),
    )
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await paste(pilot, "what does a.txt say?")
            await pilot.press("enter")  # editor.submit: a turn
            await until(pilot, lambda: "Looking" in app.transcript.text and app.status.running, "the running turn")
            await paste(pilot, "also check b.txt")
            await pilot.press("enter")  # editor.submit while a turn runs: a steer
            await paste(pilot, "then sum it up")
            await pilot.press("alt+enter")  # editor.followUp: the next turn
            await until(pilot, lambda: app.draft.text == "", "the draft sent")
            gate.set()
            await until(pilot, lambda: "Summed up." in app.transcript.text and not app.status.running, "the follow-up's answer")
            starts = [e.text for e in app.seen if isinstance(e, p.TurnStartEvent)]
            assert starts == ["what does a.txt say?", "then sum it up"]  # the steer joined the first turn
            await pilot.press("ctrl+d")  # app.quit
            await until(pilot, lambda: app.return_code == 0, "the client's exit")

    asyncio.run(main())
    after_tools = [str(m.get("content")) for m in server.requests[1].body["messages"]]
    assert "also check b.txt" in after_tools[-1]  # joined after the tool's result, as a user message
    assert "then sum it up" in str(server.requests[2].body["messages"][-1].get("content"))
    assert agent.end() == 0


def test_agent_starts_a_subagent_whose_report_joins_the_transcript(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("Alpha, and nothing else.")]))
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            await paste(pilot, "/agent reviewer read a.txt and say what it holds")
            await pilot.press("enter")
            await until(pilot, lambda: "[reviewer] Alpha, and nothing else." in app.transcript.text, "the subagent's report")

    asyncio.run(main())
    assert server.requests[0].body["messages"][-1]["content"] == "read a.txt and say what it holds"  # the child's task
    assert agent.end() == 0


def test_escape_aborts_the_running_turn_and_shift_tab_cycles_the_thinking_level(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    write_loopback_models(home, server, {"loop": "anthropic-messages"}, reasoning=True)  # a reasoning model: levels offered
    server.script(Stream([Text("Thinking "), Stall()]))
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the agent's state")
            assert app.status.offered and len(app.status.offered) >= 2
            before = app.status.thinking
            await pilot.press("shift+tab")
            await until(pilot, lambda: app.status.thinking != before, "the next thinking level")
            assert f"thinking {app.status.thinking}" in app.status_text
            await type_text(pilot, "go")
            await pilot.press("enter")
            await until(pilot, lambda: "Thinking" in app.transcript.text, "the first delta")
            await pilot.press("escape")
            await until(pilot, lambda: "turn aborted" in app.transcript.text, "the abort")
            assert not app.status.running
            server.release()

    asyncio.run(main())
    assert agent.end() == 0


def test_the_app_starts_the_agent_when_none_serves_the_session_and_it_ends_with_its_last_client(home: Path) -> None:
    started: list[subprocess.Popen[bytes]] = []

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: attached(app), "the started agent's state")
            assert app.started is not None
            started.append(app.started)
            state = next(e for e in app.seen if isinstance(e, p.StateEvent))
            assert state.pid == app.started.pid and "model loop/loop-model" in app.status_text
            assert app.started.poll() is None  # serving while its client is attached

    try:
        asyncio.run(main())
        assert started and started[0].wait(60) == 0  # the app quit: its agent (--idle-exit) ended by itself
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
