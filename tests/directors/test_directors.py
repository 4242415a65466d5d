"""Regression tests of the Director stack on a real session store (control.md S5, S5.8):
durable::directors::tests, durable::session_commands::tests and durable::goals::tests of the
seed, with the seed's names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.directors.commands import CommandError, host_push, session_command
from eukhe.directors.document import DIRECTORS_DOC, from_document, to_document
from eukhe.directors.hooks import (
    AUTONOMOUS_DOC,
    DIRECTOR_NOTICE_CUSTOM_TYPE,
    GOAL_DOC,
    Decided,
    DirectorLimits,
    Directors,
    ForcedToolError,
    PushRefused,
    Reply,
    work_of,
)
from eukhe.directors.stack import Layer, LayerKind
from eukhe.session import Conversation, Session, Store, assistant, row, tool_call, tool_result, user


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "sessions")


@pytest.fixture
def session(store: Store) -> Iterator[Session]:
    with store.create("s1") as opened:
        yield opened


def kinds(directors: Directors) -> list[str]:
    return [f"{layer.kind.value}:{layer.budget}" for layer in directors.stack()]


def notices(conversation: Conversation) -> list[dict[str, object]]:
    return [
        e.content
        for e in conversation.user_view()
        if e.custom_type == DIRECTOR_NOTICE_CUSTOM_TYPE and e.display_only and isinstance(e.content, dict)
    ]


def act(conversation: Conversation, call_id: str, name: str, args: object, text: str) -> None:
    conversation.commit(
        [
            assistant({"text": "running"}),
            tool_call({"id": call_id, "name": name, "arguments": args}),
            tool_result({"call_id": call_id, "text": text, "is_error": False}),
        ]
    )


def test_the_goal_layer_until_the_goal_completes(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("make the build green", "g1")
    main.commit([user("go")])
    assert kinds(directors) == []
    directors.begin("r1")
    assert kinds(directors) == ["goal:200"]
    for number in range(3):
        act(main, f"c{number}", "bash", {"cmd": f"step {number}"}, "ok")
        step = directors.on_yield(f"gen{number}", Reply("did a step"))
        assert step.decision is Decided.CONTINUE and step.rule == "again"
        assert step.continuation is not None and "make the build green" in step.continuation
    assert kinds(directors) == ["goal:197"]
    assert [e.custom_type for e in main.model_view()].count("eukhe.goal") == 3
    directors.set_goal_status("complete")
    step = directors.on_yield("gen3", Reply("done"))
    assert step.decision is Decided.YIELD and step.verdicts == ["goal:yield"]
    assert main.document("eukhe.directors.loop")["end"] == "yield"  # type: ignore[index]


def test_the_global_budget(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(max_steps=2, max_continuations=10))
    directors.set_autonomous(True)
    directors.begin("r1")
    assert kinds(directors) == ["autonomous:10"]
    for number in range(2):
        assert directors.on_yield(f"gen{number}", Reply("x")).decision is Decided.CONTINUE
    step = directors.on_yield("gen2", Reply("x"))
    assert (step.decision, step.rule) == (Decided.YIELD, "no_step")
    assert step.continuation is None
    # the continuation that had no step spent nothing: the layer keeps its budget
    assert kinds(directors) == ["autonomous:8"]
    assert main.document(AUTONOMOUS_DOC)["used"] == 2  # type: ignore[index]
    directors.begin("r2")  # a new first input: the global budget comes back
    assert kinds(directors) == ["autonomous:8"]
    assert directors.on_yield("gen3", Reply("x")).decision is Decided.CONTINUE


def test_a_reminder(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("ship", "g1")
    directors.begin("r1")
    directors.remind("run the tests first")
    assert kinds(directors) == ["goal:200", "reminder:1"]
    step = directors.on_yield("gen0", Reply("ok"))
    assert step.decision is Decided.CONTINUE
    assert step.verdicts == ["reminder:leave", "goal:again"]
    assert step.continuation is not None and step.continuation.startswith("run the tests first")
    assert kinds(directors) == ["goal:199"]


def test_a_reminder_that_waits_on_the_stack_for_a_continuation(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.begin("r1")
    directors.remind("check the logs")
    # no goal and no autonomous run: nothing continues, so the reminder defers and stays
    step = directors.on_yield("gen0", Reply("answer"))
    assert step.decision is Decided.YIELD and step.rule == "none"
    assert step.verdicts == ["reminder:defer"]
    assert kinds(directors) == ["reminder:1"]
    assert not [e for e in main.model_view() if e.custom_type in ("eukhe.goal", "eukhe.continuation")]
    # a later run with a goal continues: the reminder goes first, then leaves
    directors.set_goal("fix it", "g1")
    directors.begin("r2")
    assert kinds(directors) == ["goal:200", "reminder:1"]
    step = directors.on_yield("gen1", Reply("answer"))
    assert step.decision is Decided.CONTINUE
    assert step.continuation is not None and step.continuation.startswith("check the logs")
    assert kinds(directors) == ["goal:199"]


def test_a_forced_tool_call(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.begin("r1")
    directors.force("grep")
    assert directors.before_request() == "grep"
    assert directors.after_response(called=True) is False
    assert directors.before_request() is None  # called: the next request is not forced
    step = directors.on_yield("gen0", Reply("found it", tool_calls=1))
    assert step.verdicts == ["forced:leave"] and step.decision is Decided.YIELD
    assert kinds(directors) == []


def test_a_forced_call_that_is_never_made_and_a_next_run_that_is_not_forced(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.begin("r1")
    directors.force("edit")  # tries 1: one retry
    assert directors.before_request() == "edit"
    assert directors.after_response(called=False) is True  # a miss: retried
    assert directors.before_request() == "edit"
    head_before = main.head
    with pytest.raises(ForcedToolError) as failed:
        directors.after_response(called=False)
    assert failed.value.kind == "NotCalled" and failed.value.tool == "edit" and failed.value.requests == 2
    # one commit: the layer removed and the display row appended together
    new_entries = [e for e in main.entries() if head_before is not None and e.id > head_before]
    assert len(new_entries) == 1 and new_entries[0].custom_type == DIRECTOR_NOTICE_CUSTOM_TYPE
    assert main.changes(new_entries[0].id)[DIRECTORS_DOC] == {"layers": [], "version": 1}
    assert notices(main)[-1]["requests"] == 2
    assert new_entries[0] not in main.model_view()
    directors.begin("r2")
    assert directors.before_request() is None


def test_a_forced_call_with_no_budget_aborts_with_the_row(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.begin("r1")
    directors.force("bash")
    # the run ends before any forced request: the layer continues the run while it has budget
    step = directors.on_yield("gen0", Reply("hmm"))
    assert step.decision is Decided.CONTINUE and step.continuation == "Call the tool bash."
    assert kinds(directors) == ["forced:0"]
    step = directors.on_yield("gen1", Reply("still no call"))
    assert step.decision is Decided.FAIL and step.rule == "abort"
    assert step.error is not None and "NotCalled" in step.error
    assert kinds(directors) == []
    assert notices(main)[-1]["error"] == "ForcedToolError::NotCalled"


def test_the_goal_on_a_full_stack(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(stack_cap=2))
    directors.set_goal("ship", "g1")
    directors.set_autonomous(True)
    directors.remind("one")
    directors.remind("two")
    with pytest.raises(PushRefused):
        directors.remind("three")
    stack = directors.begin("r1")
    # the goal and the autonomous run keep their places below the pushed layers
    assert [layer.kind for layer in stack] == [LayerKind.AUTONOMOUS, LayerKind.GOAL, LayerKind.REMINDER, LayerKind.REMINDER]
    assert len(stack) == directors.limits.bound
    step = directors.on_yield("gen0", Reply("ok"))
    assert step.decision is Decided.CONTINUE
    assert step.verdicts == ["reminder:leave", "reminder:leave", "goal:again"]
    assert step.continuation is not None and step.continuation.startswith("two\n\none")


def test_the_autonomous_run_defers_to_the_goal_and_then_continues(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(max_continuations=2))
    directors.set_goal("ship", "g1")
    directors.set_autonomous(True)
    directors.begin("r1")
    assert kinds(directors) == ["autonomous:2", "goal:200"]
    act(main, "c1", "bash", {}, "1")
    step = directors.on_yield("gen0", Reply("ok"))
    assert step.verdicts == ["goal:again"]
    directors.set_goal_status("cleared")
    step = directors.on_yield("gen1", Reply("ok"))
    assert step.verdicts == ["goal:leave", "autonomous:again"]
    assert main.document(AUTONOMOUS_DOC)["used"] == 1  # type: ignore[index]
    assert directors.on_yield("gen2", Reply("ok")).decision is Decided.CONTINUE
    step = directors.on_yield("gen3", Reply("ok"))
    assert step.decision is Decided.YIELD  # the limit of continuations stops the run


def test_a_rerun_of_the_same_generation_repeats_the_decision(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("ship", "g1")
    directors.begin("r1")
    first = directors.on_yield("gen0", Reply("ok"))
    head = main.head
    again = directors.on_yield("gen0", Reply("ok"))
    assert again.repeated and not again.committed and main.head == head
    assert (again.decision, again.rule, again.continuation) == (first.decision, first.rule, first.continuation)


def test_an_empty_reply_fails_the_goal_as_a_model_error(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("ship", "g1")
    directors.begin("r1")
    step = directors.on_yield("gen0", Reply("", tool_calls=0))
    assert step.decision is Decided.FAIL and step.rule == "model_error"
    goal = main.document(GOAL_DOC)
    assert isinstance(goal, dict) and goal["status"] == "failed" and "empty reply" in str(goal["reason"])


def test_the_stack_after_a_reopen_and_in_a_fork(store: Store) -> None:
    with store.create("s2") as session:
        main = session.conversation("main")
        directors = Directors(main)
        directors.set_goal("ship", "g1")
        directors.begin("r1")
        fork_point = main.head
        assert fork_point is not None
        directors.remind("later")
        directors.force("grep", tries=2)
        before = kinds(directors)
    with store.open("s2") as reopened:
        again = Directors(reopened.conversation("main"))
        assert kinds(again) == before == ["goal:200", "reminder:1", "forced:1"]
        assert again.stack()[2].data["tries"] == 2
        forked = reopened.conversation("main").fork(fork_point)
        # a rewind removes the Directors added after the entry
        reopened.conversation("main").rewind(fork_point)
        assert kinds(again) == ["goal:200"]
    with store.open(forked) as fork:
        assert kinds(Directors(fork.conversation("main"))) == ["goal:200"]


def test_remind_and_force_on_the_stack(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    session_command(directors, "/remind keep the API stable")
    session_command(directors, "/force grep --tries 3")
    session_command(directors, "/force edit")
    stack = from_document(main.document(DIRECTORS_DOC))
    assert [(l.kind.value, l.budget) for l in stack] == [("reminder", 1), ("forced", 1), ("forced", 1)]
    assert stack[0].data["text"] == "keep the API stable"
    assert (stack[1].data["tool"], stack[1].data["tries"]) == ("grep", 3)
    assert (stack[2].data["tool"], stack[2].data["tries"]) == ("edit", 1)
    for bad in ["/remind", "/force", "/force a b", "/force grep --tries x", "/forcex y"]:
        with pytest.raises(CommandError):
            session_command(directors, bad)
    answer = host_push(directors, {"kind": "forced", "tool": "bash"})
    assert "stack" in answer and len(answer["stack"]["layers"]) == 4
    assert host_push(directors, {"kind": "nope"})["error"]["kind"] == "BadParams"


def test_a_force_that_fails_once(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.begin("r1")
    session_command(directors, "/force grep")
    assert directors.before_request() == "grep"
    assert directors.after_response(called=False) is True  # fails once: retried
    assert directors.before_request() == "grep"
    assert directors.after_response(called=True) is False
    assert notices(main) == []
    step = directors.on_yield("gen0", Reply("done", tool_calls=1))
    assert step.verdicts == ["forced:leave"]
    assert kinds(directors) == []


def test_a_goal_without_progress_pauses_at_the_stall_cap(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("finish the report", "g1")
    main.commit([user("go")])
    directors.begin("r1")
    act(main, "c1", "bash", {"cmd": "make"}, "ok")
    decisions = []
    for number in range(6):
        # the same act again, with a new call id: no new work
        act(main, f"again{number}", "bash", {"cmd": "make"}, "ok")
        main.commit([row("eukhe.progress_note", {"text": "thinking", "accepted": False})])
        decisions.append(directors.on_yield(f"gen{number}", Reply("waiting for the build")))
    assert [d.decision for d in decisions[:3]] == [Decided.CONTINUE] * 3
    assert "1 goal continuation in a row" in str(decisions[1].continuation)
    assert str(decisions[1].continuation).startswith("Continue working toward the goal: finish the report\nProgress check: ")
    assert "2 goal continuations in a row" in str(decisions[2].continuation)
    assert decisions[3].decision is Decided.YIELD
    reason = "No progress: 3 goal continuations in a row made no tool call with a new result"
    goal = main.document(GOAL_DOC)
    assert isinstance(goal, dict) and goal["status"] == "paused" and goal["reason"] == reason
    assert reason in notices(main)[-1]["message"]  # type: ignore[operator]
    assert all(reason not in str(e.content) for e in main.model_view())
    # a resume gives the goal the full cap again; new work clears the count
    directors.set_goal_status("active")
    directors.begin("r2")
    first = directors.on_yield("gen10", Reply("plan"))
    act(main, "n1", "bash", {"cmd": "make test"}, "3 passed")
    second = directors.on_yield("gen11", Reply("ran tests"))
    assert (first.decision, second.decision) == (Decided.CONTINUE, Decided.CONTINUE)
    assert "Progress check" not in str(second.continuation)


# Checks that kill the survivors of the mutation sample (python -m spec.mutate --area directors
# --sample 30 --seed 9): each pins a reading of the session state that no other judge pinned.


def test_a_new_user_input_gives_the_goal_the_full_cap_again(session: Session) -> None:
    """S5.8: begin clears the stall record a goal continuation left (hooks begin)."""
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("finish", "g1")
    directors.begin("r1")
    assert directors.on_yield("gen0", Reply("plan")).decision is Decided.CONTINUE
    assert main.document(GOAL_DOC)["stall"] is not None  # type: ignore[index]
    directors.begin("r2")
    assert main.document(GOAL_DOC)["stall"] is None  # type: ignore[index]


def test_the_autonomous_run_defers_to_an_active_goal_without_a_layer(session: Session) -> None:
    """S5.4: the autonomous run defers while a goal drives continuations, also when the goal was
    set after the run began (no goal layer yet): no layer decides, so the loop yields."""
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(max_continuations=2))
    directors.set_autonomous(True)
    directors.begin("r1")
    directors.set_goal("ship", "g1")
    step = directors.on_yield("gen0", Reply("ok"))
    assert (step.decision, step.verdicts) == (Decided.YIELD, ["autonomous:defer"])
    assert main.document(AUTONOMOUS_DOC)["used"] == 0  # type: ignore[index]


def test_the_autonomous_limit_is_the_one_its_document_holds(session: Session) -> None:
    """The autonomous run stops at the "max" of eukhe.autonomous (written when it was enabled),
    whatever the limits of the Directors reading it."""
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(max_continuations=5))
    directors.set_autonomous(True)
    directors.begin("r1")
    main.commit(documents={AUTONOMOUS_DOC: {"enabled": True, "stop": None, "used": 1, "max": 1}})
    step = directors.on_yield("gen0", Reply("ok"))
    assert (step.decision, step.verdicts) == (Decided.YIELD, ["autonomous:yield"])


def test_an_empty_reply_names_the_model_error(session: Session) -> None:
    """H4.7: the goal's reason and the step's error are the model error's own words."""
    main = session.conversation("main")
    directors = Directors(main)
    directors.set_goal("ship", "g1")
    directors.begin("r1")
    step = directors.on_yield("gen0", Reply(""))
    message = "model error: an empty reply (no text and no tool call)"
    assert step.error == message and main.document(GOAL_DOC)["reason"] == message  # type: ignore[index]


def test_a_progress_note_without_text_is_the_empty_note(session: Session) -> None:
    """S5.8: an accepted note's text is its act; a note with no text is the note "" (one act)."""
    main = session.conversation("main")
    main.commit([row("eukhe.progress_note", {"text": "", "accepted": True}), row("eukhe.progress_note", {"accepted": True})])
    assert work_of(main.model_view()).work == 1


def test_a_push_past_the_cap_answers_push_refused(session: Session) -> None:
    """S5.6, S5.7: directors.push past directors.stackCap answers the error PushRefused; /force
    --tries without its number says so."""
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(stack_cap=1))
    assert "stack" in host_push(directors, {"kind": "reminder", "text": "one"})
    answer = host_push(directors, {"kind": "reminder", "text": "two"})
    assert set(answer) == {"error"} and answer["error"]["kind"] == "PushRefused"
    assert "directors.stackCap 1" in answer["error"]["message"]
    with pytest.raises(CommandError, match=r"^/force: --tries needs a number$"):
        session_command(directors, "/force grep --tries")


def test_an_autonomous_layer_without_its_document_gets_no_continuations(session: Session) -> None:
    """S5.6: the autonomous layer gets its remaining continuations; with no eukhe.autonomous
    (a stored stack that kept the layer) that is none."""
    main = session.conversation("main")
    main.commit(documents={DIRECTORS_DOC: to_document([Layer(LayerKind.AUTONOMOUS, 3)])})
    directors = Directors(main)
    assert directors.autonomous() is None
    directors.begin("r1")
    assert kinds(directors) == ["autonomous:0"]
