"""Document validation of the Directors (issue 10): bad limits, goal statuses and stacks are
refused with typed errors naming what was wrong, before anything is committed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.directors.document import DIRECTORS_DOC, MAX_BUDGET, DocumentError, from_document, to_document
from eukhe.directors.hooks import MAX_LIMIT, DirectorLimits, Directors, GoalError, LimitsError
from eukhe.directors.stack import Layer, LayerKind
from eukhe.session import Session, Store, user


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with Store(tmp_path / "sessions").create("v1") as opened:
        yield opened


def test_a_bogus_goal_status_is_refused_and_not_stored(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    with pytest.raises(GoalError, match="no goal"):
        directors.set_goal_status("paused")
    directors.set_goal("ship it", "g1")
    with pytest.raises(GoalError, match="'bogus'"):
        directors.set_goal_status("bogus")
    goal = main.document("eukhe.goal")
    assert isinstance(goal, dict) and goal["status"] == "active"


@pytest.mark.parametrize(
    ("field", "value"),
    [("stack_cap", -1), ("max_steps", -1), ("max_steps", 10**27), ("stall_steps", MAX_LIMIT + 1), ("max_continuations", True), ("stack_cap", 2.5)],
)
def test_limits_out_of_range_are_refused_naming_the_setting(field: str, value: object) -> None:
    with pytest.raises(LimitsError, match=r"directors\.|autonomous\."):
        DirectorLimits(**{field: value})  # type: ignore[arg-type]


def test_max_steps_minus_one_commits_nothing(session: Session) -> None:
    """`--max-steps -1` used to commit an invalid eukhe.directors document and then fail reading it."""
    main = session.conversation("main")
    with pytest.raises(LimitsError, match="directors.maxSteps"):
        Directors(main, DirectorLimits(max_steps=-1))
    directors = Directors(main, DirectorLimits(max_steps=MAX_LIMIT))
    directors.set_goal("g", "g1")
    main.commit([user("go")])
    directors.begin("run-1")
    assert from_document(main.document(DIRECTORS_DOC))[0].budget == MAX_LIMIT


@pytest.mark.parametrize(
    "layer",
    [Layer(LayerKind.GOAL, -1), Layer(LayerKind.GOAL, MAX_BUDGET + 1), Layer(LayerKind.REMINDER, 1, {"x": float("nan")})],
)
def test_an_invalid_stack_is_never_made_a_document(layer: Layer) -> None:
    with pytest.raises(DocumentError):
        to_document([layer])


def test_a_layer_with_an_unknown_key_and_version_true_are_refused() -> None:
    with pytest.raises(DocumentError, match="layers.0.extra"):
        from_document({"layers": [{"budget": 1, "kind": "goal", "extra": 1}], "version": 1})
    with pytest.raises(DocumentError, match="version"):
        from_document({"layers": [], "version": True})
