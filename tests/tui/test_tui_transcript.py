"""What the terminal UI shows of each event of the agent: the agent of session s1 served in the
test's event loop (the real agent, no turn loop) broadcasts the protocol's events over its real
socket, and Textual's pilot reads the app's transcript and screen. Every expected row is written
here by hand, from the protocol's fields: no row is computed by the code under test.

Nothing waits on a clock: each step waits for what the app shows, with a deadline that only a
failing run reaches."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.widgets import Collapsible, Static
from tui_support import attached, mock_agent, screen_text, until

from eukhe.agent import protocol as p
from eukhe.session import Store
from eukhe.tui import EukheApp
from eukhe.tui.editor import Hints

SIZE = (100, 30)
Scenario = Callable[[Any, EukheApp, Any], Awaitable[None]]


def app_of(home: Path) -> EukheApp:
    return EukheApp(home, Store(home / "sessions").path("s1"), "s1", home.parent)


def served(home: Path, scenario: Scenario) -> None:
    """Run ``scenario(agent, app, pilot)`` with the app attached to the mock agent of s1."""

    async def main() -> None:
        async with mock_agent(home) as agent:
            app = app_of(home)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await scenario(agent, app, pilot)

    asyncio.run(main())


async def shown(agent: Any, app: EukheApp, pilot: Any, *events: p.Event) -> None:
    """Broadcast ``events``; wait until the app has taken the last of them."""
    for event in events:
        agent.broadcast(event)
    await until(pilot, lambda: bool(app.seen) and app.seen[-1] == events[-1], f"the app to take {events[-1].type}")
    await pilot.pause()


def collapsibles(app: EukheApp, kind: str) -> list[Collapsible]:
    return list(app.transcript.query(f".{kind}").results(Collapsible))


def test_the_models_thinking_streams_into_one_collapsed_block_that_ctrl_t_opens(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        await shown(agent, app, pilot, p.TurnStartEvent(run="r1", text="plan it"), p.ThinkingEvent(text="first, "), p.ThinkingEvent(text="read a.txt"))
        assert app.transcript.lines[-2:] == ["> plan it", "thinking"]  # one block for the two pieces
        assert [sorted(w.classes) for w in app.transcript.children if "plan it" in str(w.render())] == [["user"]]
        [block] = collapsibles(app, "thinking")
        assert block.collapsed is True
        await pilot.press("ctrl+t")  # the default bind: action app.thinking.toggle
        await until(pilot, lambda: app.transcript.lines[-1] == "thinking shown", "the row of the toggle")
        assert block.collapsed is False
        await until(pilot, lambda: "first, read a.txt" in screen_text(app), "the thinking's text on the screen")
        await shown(agent, app, pilot, p.DeltaEvent(text="It says alpha."), p.ThinkingEvent(text="then"))
        assert app.transcript.lines[-2:] == ["It says alpha.", "thinking"]  # thinking after a reply ends the reply
        assert [b.collapsed for b in collapsibles(app, "thinking")] == [False, False]  # shown: new blocks open
        await shown(agent, app, pilot, p.DeltaEvent(text="Second reply."), p.ToolCallEvent(id="c9", name="read", arguments="{}"))
        assert app.transcript.lines[-2:] == ["Second reply.", "tool read {}"]  # a reply of its own, nothing of the first
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.transcript.lines[-1] == "thinking hidden", "the row of the second toggle")
        assert [b.collapsed for b in collapsibles(app, "thinking")] == [True, True]

    served(home, scenario)


def test_streamed_text_and_rows_jump_to_the_end_with_no_scroll_animation(home: Path) -> None:
    """The reply streams in pieces: each one jumps the transcript to its end. An animated scroll
    (a second long, Textual's default) would trail behind the stream; none ever starts."""

    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        animated = []
        for n in range(12):
            await shown(agent, app, pilot, p.DeltaEvent(text=f"line {n} of a long reply\n\n" * 3))
            animated.append(app.animator.is_being_animated(app.transcript, "scroll_y"))
        await shown(agent, app, pilot, p.RowEvent(kind="note", text="a row after it"))
        animated.append(app.animator.is_being_animated(app.transcript, "scroll_y"))
        assert app.transcript.max_scroll_y > 0  # the reply is taller than the screen
        assert animated == [False] * 13

    served(home, scenario)


def test_the_models_thinking_is_shown_as_text_never_as_markup(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        await shown(agent, app, pilot, p.ThinkingEvent(text="[bold]x[/bold] and "), p.ThinkingEvent(text="[link=y]z[/link]"))
        [block] = collapsibles(app, "thinking")
        assert block.title == "thinking"
        [body] = [w for w in block.query(Static) if w.parent is not None and isinstance(w.parent.parent, Collapsible)]
        assert str(body.render()) == "[bold]x[/bold] and [link=y]z[/link]"

    served(home, scenario)


def test_a_tool_result_is_clipped_to_twelve_lines_and_one_of_an_unseen_call_has_its_own_block(home: Path) -> None:
    long = "\n".join(f"line {n}" for n in range(1, 16))  # 15 lines: 12 shown, 3 counted
    clipped = "\n".join(f"line {n}" for n in range(1, 13)) + "\n... 3 more lines"

    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        await shown(agent, app, pilot, p.ToolResultEvent(id="before", text="done", is_error=False), p.ThinkingEvent(text="run it"))
        assert app.transcript.lines[-2:] == ["result ok done", "thinking"]
        await shown(agent, app, pilot, p.ToolCallEvent(id="c1", name="bash", arguments='{"command":\n   "seq 15"}'))
        [running] = [body for body in collapsibles(app, "tool")[0].query(Static) if body.parent is not None and isinstance(body.parent.parent, Collapsible)]
        assert str(running.render()) == "running..."  # the call's body until its result comes
        await shown(agent, app, pilot, p.ToolResultEvent(id="c1", text=long, is_error=True))
        assert str(running.render()) == clipped
        assert app.transcript.lines[-2:] == ['tool bash {"command": "seq 15"}', f"result error {clipped}"]
        [block] = collapsibles(app, "tool")
        assert block.collapsed is True and block.title == '\\[error] bash {"command": "seq 15"}'
        await pilot.press("ctrl+o")  # action app.tools.expand
        await until(pilot, lambda: not block.collapsed, "the tool block open")
        assert [b.collapsed for b in collapsibles(app, "thinking")] == [True]  # tools only: thinking has its own toggle
        await until(pilot, lambda: "... 3 more lines" in screen_text(app), "the clipped result on the screen")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: block.collapsed, "the tool block closed again")

    served(home, scenario)


def test_retries_notes_director_steps_subagents_and_turn_ends_are_rows(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        before = len(app.transcript.lines)
        await shown(
            agent, app, pilot,
            p.RetryEvent(attempt=1, retries=3, kind="overloaded", wait=2.5),
            p.NoteEvent(kind="steer", used=1, max=2),
            p.StepEvent(decision="yield", rule="no_layer", verdicts=[]),  # nothing on the stack: no row
            p.StepEvent(decision="continue", rule="goal_unmet", verdicts=["goal: continue"], continuation="keep\n   going"),
            p.StepEvent(decision="fail", rule="forced_not_called", verdicts=[]),
            p.SubagentEvent(agent="reviewer", event=p.ToolCallEvent(id="s1", name="read", arguments='{"path": "a.txt"}')),
            p.SubagentEvent(agent="reviewer", event=p.TurnEndEvent(run="c1", reason="failed", text="no\nkey")),
            p.SubagentEvent(agent="reviewer", event=p.TurnEndEvent(run="c2", reason="answered", text="")),
            p.SubagentEvent(agent="reviewer", event=p.DeltaEvent(text="streamed to its own conversation")),
            p.TurnEndEvent(run="r1", reason="aborted", text=""),
            p.TurnEndEvent(run="r2", reason="failed", text="the provider refused"),
            p.TurnEndEvent(run="r3", reason="answered", text="done"),
            p.RowEvent(kind="director", text="goal layer pushed"),
            p.RowEvent(kind="progress_pause", text="the goal pauses: no progress"),
            p.RowEvent(kind="settings_error", text="config.cfg: line 1"),
            p.RowEvent(kind="retry", text="after 2 s"),
            p.RowEvent(kind="effort", text="thinking high"),
        )
        assert app.transcript.lines[before:] == [
            "retry 1/3: overloaded, next try in 2.5 s",
            "note steer: 1/2 used",
            "director: continue (goal_unmet; goal: continue): keep going",
            "director: fail (forced_not_called; no layer)",
            '[reviewer] tool read {"path": "a.txt"}',
            "[reviewer] turn failed: no key",
            "[reviewer] turn answered",
            "turn aborted",
            "turn failed: the provider refused",
            "[director] goal layer pushed",
            "[progress_pause] the goal pauses: no progress",
            "[settings_error] config.cfg: line 1",
            "[retry] after 2 s",
            "[effort] thinking high",
        ]
        rows = list(app.transcript.children)[-14:]
        classes = [["retry"], ["retry"], ["director"], ["director"], ["row"], ["row"], ["row"], ["row"], ["error"], ["director"],
                   ["director"], ["error"], ["retry"], ["row"]]  # a progress pause is the Director's; a settings error an error
        assert [sorted(w.classes) for w in rows] == classes
        assert [str(w.render()) for w in rows] == app.transcript.lines[-14:]  # each row shows its text

    served(home, scenario)


def test_replies_of_the_agent_become_rows_and_the_status_line(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        before = len(app.transcript.lines)
        await shown(
            agent, app, pilot,
            p.ThinkingLevelEvent(level=None, offered_levels=None),
            p.MemoryEvent(view_bytes=2000, ceiling=128000, messages=3, nodes=3, view_lines=2, text="the chat memory", lines=["m0 first", "m1 second"]),
            p.CvarSavedEvent(path="/home/u/.eukhe/agent/agents/main.cfg", written=[p.CvarSet(cvar="retry.enabled", value=False), p.CvarSet(cvar="serviceTier", value="flex")]),
            p.CvarSavedEvent(path="/a.cfg", written=[]),
            p.OkEvent(request="cvar_save", text=""),
            p.ErrorEvent(kind="busy", message="a turn runs"),
        )
        assert app.transcript.lines[before:] == [
            "the thinking level stays: the model offers fewer than two levels",
            "the chat memory",
            "m0 first",
            "m1 second",
            "/cvar save: retry.enabled=False, serviceTier=flex -> /home/u/.eukhe/agent/agents/main.cfg",
            "/cvar save: no sets -> /a.cfg",
            "cvar_save: done",
            "error: busy: a turn runs",
        ]
        rows = list(app.transcript.children)[-8:]
        assert [str(w.render()) for w in rows] == app.transcript.lines[-8:]
        assert [sorted(w.classes) for w in rows] == [["row"]] * 7 + [["error"]]
        assert (app.status.mem_used, app.status.mem_limit) == (2000, 128000)
        assert "mem 2K/128K" in app.status_text

    served(home, scenario)


def test_client_commands_blank_drafts_and_unknown_actions(home: Path) -> None:
    (home / "binds.cfg").write_text('bind f4 "action app.nowhere"\nbind f5 "action app.quit"\nnot a bind line\n', encoding="utf-8")

    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        assert any(line.startswith("error: ") and "binds.cfg" in line for line in app.transcript.lines)  # its warning, at start
        before = len(app.transcript.lines)
        app.draft.insert("   \n  ")
        await pilot.press("enter")  # a blank draft sends nothing and stays
        await pilot.pause()
        assert app.transcript.lines[before:] == []
        app.draft.clear()
        await pilot.press("f4")
        await until(pilot, lambda: len(app.transcript.lines) > before, "the unknown action's row")
        assert app.transcript.lines[before].startswith("error: action app.nowhere: no such action (the actions: app.interrupt, ")
        for typed in ("/tier", "/help"):
            app.draft.insert(typed)
            await pilot.press("enter")
        await until(pilot, lambda: any(line.startswith("app.stt.toggle") for line in app.transcript.lines), "the help's last row")
        tier = next(line for line in app.transcript.lines if line.startswith("service tier: "))
        assert tier == "service tier: auto; /tier auto|default|flex|priority sets it"  # serviceTier's default, in the agent's switches
        assert "app.stt.pushToTalk (no key): dictation, push to talk (S9)" in app.transcript.lines  # bound by no key here
        assert "/help: these commands" in app.transcript.lines and "editor.submit (enter): send the draft (a running turn: steer it)" in app.transcript.lines and "/new: a new empty session, and switch to it" in app.transcript.lines
        await pilot.press("f5")  # action app.quit
        await until(pilot, lambda: app.return_code == 0, "the app's exit")

    served(home, scenario)


def test_fork_of_an_empty_session_and_requests_after_the_agent_is_gone(home: Path) -> None:
    async def main() -> None:
        async with mock_agent(home) as agent:
            app = app_of(home)
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: attached(app), "the agent's state")
                await app.fork(None)
                assert app.transcript.lines[-1] == "error: /fork: session s1 has no entries: nothing to fork"
                await agent.close()  # the agent ends: the connection with it
                await until(pilot, lambda: app.transcript.lines[-1] == "error: the agent's connection ended", "the connection's end")
                assert app.status.connected is False
                app.draft.insert("/remind run the tests")
                await pilot.press("enter")
                await until(pilot, lambda: app.transcript.lines[-1] == "error: not connected to the agent: nothing was sent", "the refusal to send")

    asyncio.run(main())


def test_an_agent_that_cannot_be_reached_is_one_error_row(home: Path) -> None:
    async def unreachable(session: str) -> Any:
        raise OSError(f"no agent serves {session}")

    async def main() -> None:
        app = EukheApp(home, Store(home / "sessions").path("s1"), "s1", home.parent, reach=unreachable)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(app.transcript.lines), "the error row")
            assert app.transcript.lines == ["error: cannot reach the agent of session s1: no agent serves s1"]
            assert app.client is None

    asyncio.run(main())


def test_quit_leaves_with_exit_status_0(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        app.draft.insert("/quit")
        await pilot.press("enter")
        await until(pilot, lambda: app.return_code is not None, "the app's exit")
        assert app.return_code == 0

    served(home, scenario)


def test_a_draft_that_begins_a_slash_command_shows_what_it_can_become(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        [hints] = app.query(Hints).results(Hints)
        assert hints.display is False
        await pilot.press("/", "f", "o")
        await until(pilot, lambda: str(hints.render()) == "/force  /fork", "the two commands /fo can become")
        assert hints.display is True
        await pilot.press("r", "k")
        await until(pilot, lambda: str(hints.render()) == "/fork [ENTRY]: a new session from this one up to ENTRY (default: the head), and switch to it", "/fork's use")
        await pilot.press("x")
        await until(pilot, lambda: hints.display is False, "no hint for a draft no command begins")
        assert str(hints.render()) == ""

    served(home, scenario)


def test_a_later_state_sets_the_goal_and_a_tier_that_is_no_name_shows_none(home: Path) -> None:
    async def scenario(agent: Any, app: EukheApp, pilot: Any) -> None:
        [state] = [e for e in app.seen if isinstance(e, p.StateEvent)]
        assert "goal" not in app.status_text
        await shown(agent, app, pilot, state.model_copy(update={"goal": {"status": "active", "text": "ship it"}}))
        assert app.status.goal == {"status": "active", "text": "ship it"} and "| goal active" in app.status_text
        await shown(agent, app, pilot, p.SwitchesEvent(switches={"serviceTier": "flex"}))
        assert "| tier flex" in app.status_text
        await shown(agent, app, pilot, p.SwitchesEvent(switches={"serviceTier": 5}))  # not a tier's name: not known
        assert app.status.tier is None and "tier" not in app.status_text
        await shown(agent, app, pilot, p.DirectorsEvent(stack=[{"kind": "reminder", "text": "x"}, {"text": "a layer without its kind"}]))
        assert app.status.stack == ["reminder", "?"]
        await shown(agent, app, pilot, state.model_copy(update={"directors": [{"text": "no kind"}, {"kind": "goal"}]}))
        assert app.status.stack == ["?", "goal"]

    served(home, scenario)
