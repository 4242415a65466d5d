"""The agent's protocol (eukhe.agent.protocol): every request and event round-trips through one
line, every line that is not a message gets a ProtocolError naming its kind and what was wrong
(never another exception, whatever the bytes), the turn loop's events are checked, and lines
are framed with a limit."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eukhe.agent import protocol as p
from eukhe.paths import SOCKET_ADDRESS_MAX

TEXT = st.text(max_size=30)
WORDS = st.text(min_size=1, max_size=30)
IDS = st.none() | st.text(max_size=20)
NAT = st.integers(min_value=0, max_value=2**70)
JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT
JSON = st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=12)
OBJECTS = st.dictionaries(TEXT, JSON, max_size=4)

REQUESTS = st.one_of(
    st.builds(p.TurnRequest, id=IDS, text=WORDS),
    st.builds(p.SteerRequest, id=IDS, text=WORDS),
    st.builds(p.FollowUpRequest, id=IDS, text=WORDS),
    st.builds(p.AbortRequest, id=IDS),
    st.builds(p.cvar_request, TEXT, st.booleans(), IDS),
    st.builds(p.CvarSaveRequest, id=IDS),
    st.builds(p.CommandRequest, id=IDS, line=WORDS),
    st.builds(p.GetModelCatalogRequest, id=IDS),
    st.builds(p.CycleThinkingLevelRequest, id=IDS, backward=st.booleans()),
    st.builds(p.StatusRequest, id=IDS),
)
ROW_KIND = st.sampled_from(p.ROW_KINDS)
LOOP_EVENTS = st.one_of(
    st.builds(p.TurnStartEvent, run=TEXT, text=TEXT),
    st.builds(p.DeltaEvent, text=TEXT),
    st.builds(p.ThinkingEvent, text=TEXT),
    st.builds(p.ToolCallEvent, id=TEXT, name=TEXT, arguments=TEXT),
    st.builds(p.ToolResultEvent, id=TEXT, text=TEXT, is_error=st.booleans(), kind=st.none() | TEXT),
    st.builds(p.RowEvent, kind=ROW_KIND, text=TEXT),
    st.builds(p.RetryEvent, attempt=NAT, retries=NAT, kind=TEXT, wait=st.floats(min_value=0, allow_infinity=False)),
    st.builds(p.NoteEvent, kind=TEXT, used=NAT, max=NAT),
    st.builds(p.TurnEndEvent, run=TEXT, reason=TEXT, text=TEXT),
)
MODEL = st.none() | st.builds(p.ModelRef, provider=TEXT, id=TEXT)
LEVELS = st.none() | st.lists(TEXT, max_size=3)
EVENTS = st.one_of(
    LOOP_EVENTS,
    st.builds(
        p.StateEvent,
        re=IDS,
        session=TEXT,
        pid=st.integers(),
        head=st.none() | st.integers(),
        directors=st.lists(OBJECTS, max_size=3),
        goal=st.none() | OBJECTS,
        settings_errors=st.lists(TEXT, max_size=3),
        model=MODEL,
        thinking_level=TEXT,
        offered_levels=LEVELS,
        running=st.booleans(),
        turn=st.lists(LOOP_EVENTS, max_size=5),
        rows=st.lists(st.builds(p.RowEvent, kind=ROW_KIND, text=TEXT), max_size=3),
        clients=NAT,
        switches=OBJECTS,
    ),
    st.builds(p.OkEvent, re=IDS, request=TEXT, text=TEXT),
    st.builds(p.ErrorEvent, re=IDS, kind=TEXT, message=TEXT, cvar=st.none() | TEXT),
    st.builds(
        lambda re, is_global, outcomes: p.CvarResultEvent.model_validate({"re": re, "global": is_global, "outcomes": outcomes}),
        IDS,
        st.booleans(),
        st.lists(st.builds(p.CvarOutcome, command=TEXT, outcome=TEXT, refused=st.booleans()), max_size=3),
    ),
    st.builds(p.CvarSavedEvent, re=IDS, path=TEXT, written=st.lists(st.builds(p.CvarSet, cvar=TEXT, value=JSON), max_size=3)),
    st.builds(
        p.ModelCatalogEvent,
        re=IDS,
        models=st.lists(
            st.builds(
                p.CatalogEntry,
                provider=TEXT,
                id=TEXT,
                name=TEXT,
                api=TEXT,
                reasoning=st.booleans(),
                context_window=NAT,
                max_tokens=NAT,
                thinking_levels=st.lists(TEXT, max_size=3),
                source=TEXT,
            ),
            max_size=3,
        ),
        models_json_errors=st.lists(TEXT, max_size=2),
    ),
    st.builds(p.ThinkingLevelEvent, re=IDS, level=st.none() | TEXT, offered_levels=LEVELS),
    st.builds(p.ModelEvent, re=IDS, model=MODEL, thinking_level=TEXT, offered_levels=LEVELS),
    st.builds(p.DirectorsEvent, stack=st.lists(OBJECTS, max_size=3)),
    st.builds(p.SwitchesEvent, switches=OBJECTS),
)


@given(REQUESTS)
def test_every_request_round_trips_through_one_line(request: p.Request) -> None:
    line = p.encode(request)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["v"] == p.PROTOCOL_VERSION and data["type"] == request.type
    assert p.decode_request(line) == request
    assert p.decode_request(line.rstrip(b"\n") + b"\r\n") == request  # a \r before the newline is taken away


@given(EVENTS)
def test_every_event_round_trips_through_one_line(event: p.Event) -> None:
    line = p.encode(event)
    assert line.count(b"\n") == 1
    assert p.decode_event(line) == event


def test_the_state_carries_the_switches_and_a_state_line_without_them_still_decodes() -> None:
    state = {"v": 1, "type": "state", "session": "s1", "pid": 7, "head": None, "directors": [], "goal": None, "settings_errors": [],
             "model": None, "thinking_level": "off", "offered_levels": None, "running": False, "turn": [], "rows": [], "clients": 1}  # fmt: skip
    old = p.decode_event(json.dumps(state))  # a line of an agent that sends no switches
    assert isinstance(old, p.StateEvent) and old.switches == {}
    switches = {"serviceTier": "flex", "autonomous.enabled": False, "stt.enabled": True}
    new = p.decode_event(json.dumps({**state, "switches": switches}))
    assert isinstance(new, p.StateEvent) and new.switches == switches
    sent = p.decode_event(p.encode(p.SwitchesEvent(switches=switches)))
    assert sent == p.SwitchesEvent(switches=switches) and json.loads(p.encode(sent))["type"] == "switches"
    assert set(p.SWITCHES) == set(switches)


def test_the_cvar_request_carries_global_under_its_own_name() -> None:
    line = p.encode(p.cvar_request("toggle retry.enabled", True, "7"))
    assert json.loads(line) == {"v": 1, "type": "cvar", "id": "7", "line": "toggle retry.enabled", "global": True}
    request = p.decode_request(b'{"v": 1, "type": "cvar", "line": "set a 1"}')
    assert isinstance(request, p.CvarRequest) and request.global_ is False
    with pytest.raises(p.ProtocolError) as refused:  # the Python name is no key of the wire
        p.decode_request(b'{"v": 1, "type": "cvar", "line": "set a 1", "global_": true}')
    assert refused.value.kind == p.INVALID and "global_" in refused.value.message


@pytest.mark.parametrize(
    ("line", "kind", "says"),
    [
        (b"\xff\xfe{}", p.NOT_UTF8, "not UTF-8 (byte 0)"),
        (b"", p.NOT_JSON, "an empty line"),
        (b"   \r\n", p.NOT_JSON, "an empty line"),
        (b"{", p.NOT_JSON, "not JSON"),
        (b'{"v": 1, "type": "turn", "text": "a"} x', p.NOT_JSON, "not JSON: Extra data"),
        (b"[" * 200 + b"]" * 200, p.NOT_JSON, "nested more than 100 brackets deep"),
        (b'{"v": 1, "type": "retry", "wait": NaN}', p.NOT_JSON, "NaN is not a JSON number"),
        (b'{"v": 1, "type": "turn", "text": 1e999}', p.NOT_JSON, "past the largest JSON number"),
        (b"[1, 2]", p.NOT_OBJECT, "a JSON object, not an array"),
        (b'"turn"', p.NOT_OBJECT, "not a string"),
        (b"null", p.NOT_OBJECT, "not null"),
        (b'{"type": "status"}', p.VERSION, 'has no "v"'),
        (b'{"v": 2, "type": "status"}', p.VERSION, "protocol version 2 is not known"),
        (b'{"v": true, "type": "status"}', p.VERSION, "protocol version true"),
        (b'{"v": 1.0, "type": "status"}', p.VERSION, "protocol version 1.0"),
        (b'{"v": 1}', p.UNKNOWN_TYPE, 'no "type"'),
        (b'{"v": 1, "type": "launch"}', p.UNKNOWN_TYPE, 'type "launch": the types are turn, steer'),
        (b'{"v": 1, "type": ["turn"]}', p.UNKNOWN_TYPE, 'type ["turn"]'),
        (b'{"v": 1, "type": "' + b"t" * 50 + b'"}', p.UNKNOWN_TYPE, 'type "' + "t" * 36 + '...: the types'),  # a value shown cut to 40
        (b'{"v": 1, "type": "' + b"t" * 38 + b'"}', p.UNKNOWN_TYPE, 'type "' + "t" * 38 + '": the types'),  # 40 shown whole
        (b'{"v": 1, "type": "turn"}', p.INVALID, "turn text: Field required"),
        (b'{"v": 1, "type": "turn", "text": ""}', p.INVALID, "turn text: String should have at least 1 character"),
        (b'{"v": 1, "type": "turn", "text": 5}', p.INVALID, "turn text: Input should be a valid string"),
        (b'{"v": 1, "type": "status", "extra": 1}', p.INVALID, "status extra: Extra inputs are not permitted"),
        (b'{"v": 1, "type": "cvar", "line": "x", "global": "yes"}', p.INVALID, "cvar global: Input should be a valid boolean"),
        (b'{"v": 1, "type": "cycle_thinking_level", "backward": 1}', p.INVALID, "cycle_thinking_level backward"),
        (b'{"v": 1, "type": "status", "id": 7}', p.INVALID, "status id: Input should be a valid string"),
        (b'{"v": 1, "type": "status", "id": "' + b"x" * 300 + b'"}', p.INVALID, "status id: String should have at most 256"),
        (b'{"v": 1, "type": "turn", "text": "\\ud800"}', p.NOT_UTF8, "lone surrogate escape in text"),
        (b'{"v": 1, "type": "turn", "\\udfff": 1}', p.NOT_UTF8, "lone surrogate escape in a key"),
        (b'{"v": 1, "type": "delta", "text": "x"}', p.UNKNOWN_TYPE, 'type "delta"'),  # an event is no request
    ],
)
def test_a_line_that_is_no_request_is_refused_naming_its_kind_and_what_was_wrong(line: bytes, kind: str, says: str) -> None:
    with pytest.raises(p.ProtocolError) as refused:
        p.decode_request(line)
    assert refused.value.kind == kind
    assert says in refused.value.message, refused.value.message
    assert str(refused.value) == f"{kind}: {refused.value.message}"


def test_an_error_answers_the_id_of_the_request_when_it_can_be_read() -> None:
    for line, re in (
        (b'{"v": 1, "type": "turn", "id": "r1"}', "r1"),
        (b'{"v": 9, "type": "turn", "id": "r2"}', "r2"),
        (b'{"v": 1, "type": "nosuch", "id": "r3"}', "r3"),
        (b'{"v": 1, "type": "turn", "id": 4}', None),
        (b'{"v": 1, "type": "turn", "id": "\\ud800"}', None),
    ):
        with pytest.raises(p.ProtocolError) as refused:
            p.decode_request(line)
        assert refused.value.re == re, line


@given(st.binary(max_size=200))
def test_no_bytes_break_the_decoders(data: bytes) -> None:
    for decode in (p.decode_request, p.decode_event):
        try:
            decode(data)
        except p.ProtocolError as error:
            assert error.kind in (p.NOT_UTF8, p.NOT_JSON, p.NOT_OBJECT, p.VERSION, p.UNKNOWN_TYPE, p.INVALID)


MESSAGE_LIKE = st.fixed_dictionaries(
    {"v": st.sampled_from([1, 1, 1, 0, 2, True, "1", None]), "type": st.sampled_from([*p.REQUESTS, *p.EVENTS, "x", 1])},
    optional={
        "id": JSON,
        "re": JSON,
        "text": JSON,
        "line": JSON,
        "global": JSON,
        "backward": JSON,
        "kind": JSON,
        "wait": JSON,
        "turn": st.lists(OBJECTS, max_size=2),
        "extra": JSON,
    },
)


@given(st.one_of(JSON, MESSAGE_LIKE))
def test_no_json_value_breaks_the_decoders(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    for decode in (p.decode_request, p.decode_event):
        try:
            message = decode(text.encode("utf-8"))
        except p.ProtocolError as error:
            assert error.message and error.kind in (p.NOT_OBJECT, p.VERSION, p.UNKNOWN_TYPE, p.INVALID, p.NOT_JSON)
        else:
            assert p.encode(message)  # what decodes encodes again


def test_the_turn_loops_events_are_checked() -> None:
    good: list[dict[str, Any]] = [
        {"type": "turn_start", "run": "r1", "text": "hi"},
        {"type": "delta", "text": "He"},
        {"type": "thinking", "text": "hm"},
        {"type": "tool_call", "id": "c1", "name": "read", "arguments": '{"path": "a"}'},
        {"type": "tool_result", "id": "c1", "text": "x", "is_error": False, "kind": None},
        {"type": "tool_result", "id": "c1", "text": "x", "is_error": True},
        *({"type": "row", "kind": kind, "text": "t"} for kind in p.ROW_KINDS),
        {"type": "retry", "attempt": 1, "retries": 3, "kind": "rate_limit", "wait": 2},
        {"type": "retry", "attempt": 1, "retries": 3, "kind": "rate_limit", "wait": 0.5},
        {"type": "note", "kind": "no_answer", "used": 1, "max": 8},
        *({"type": "turn_end", "run": "r1", "reason": reason, "text": ""} for reason in
          ("answered", "failed", "aborted", "not_called", "max_tool_rounds", "max_notes")),
    ]
    for event in good:
        typed = p.loop_event(event)
        dumped = typed.model_dump(exclude={"v"})
        assert {key: dumped[key] for key in event} == event and dumped.keys() - event.keys() <= {"kind"}
    for event, says in (
        ({"type": "delta", "text": "a", "extra": 1}, "delta extra: Extra inputs are not permitted"),
        ({"type": "delta"}, "delta text: Field required"),
        ({"type": "row", "kind": "gossip", "text": "t"}, "row kind: Input should be"),
        ({"type": "retry", "attempt": 1, "retries": 3, "kind": "k", "wait": math.nan}, "retry wait"),
        ({"type": "retry", "attempt": 1, "retries": 3, "kind": "k", "wait": math.inf}, "retry wait"),
        ({"type": "retry", "attempt": -1, "retries": 3, "kind": "k", "wait": 1}, "retry attempt"),
        ({"type": "tool_result", "id": "c", "text": "x", "is_error": "no"}, "tool_result is_error"),
        ({"type": "state"}, 'type "state"'),  # the agent's own events are not the loop's
        ({"text": "x"}, 'no "type"'),
        ({"type": "delta", "text": "x", "v": 2}, "delta v"),
    ):
        with pytest.raises(p.ProtocolError) as refused:
            p.loop_event(event)
        assert says in refused.value.message, (event, refused.value.message)
    with pytest.raises(p.ProtocolError) as refused:
        p.loop_event(["delta"])  # type: ignore[arg-type]
    assert refused.value.kind == p.NOT_OBJECT


def test_a_lone_surrogate_in_an_event_is_written_as_a_question_mark() -> None:
    line = p.encode(p.DeltaEvent(text="a\ud800b"))
    assert p.decode_event(line) == p.DeltaEvent(text="a?b")


@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.data())
def test_lines_come_out_whole_however_the_bytes_are_cut(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    buffer = p.LineBuffer(limit=1000)
    got: list[bytes | None] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)]):
        got += buffer.feed(stream[start:end])
    assert got == lines and buffer.rest() == b""


def test_a_line_past_the_limit_is_dropped_and_the_next_is_read() -> None:
    buffer = p.LineBuffer(limit=8)
    assert buffer.feed(b"12345678\n") == [b"12345678"]  # at the limit: kept
    assert buffer.feed(b"123456789") == []  # past it, no newline yet: dropped as it comes
    assert buffer.buffer == b""
    assert buffer.feed(b"0" * 100) == [] and buffer.buffer == b""
    assert buffer.feed(b"tail\nnext\npart") == [None, b"next"]
    assert buffer.rest() == b"part"
    assert buffer.feed(b"123456789\nok\n") == [None, b"ok"]  # past the limit within one chunk
    buffer.feed(b"x" * 20)
    assert buffer.rest() is None  # an unterminated last line past the limit


def test_the_socket_is_named_by_the_session_and_its_directory_and_fits_an_address(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "s1", tmp_path / "b" / "s1"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert p.socket_name(one) != p.socket_name(two)
    assert p.socket_name(one).startswith("s1-") and p.socket_name(one).endswith(".sock")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a")
    assert p.socket_name(link / "s1") == p.socket_name(one)  # the same session, whatever the path
    long_id = tmp_path / ("x" * 128)
    name = p.socket_name(long_id)
    temporary = f".{name}.{2**22}.{'0' * 8}"  # the name the agent binds before its rename
    assert len(os.fsencode(f"/proc/self/fd/{2**20}/{temporary}")) <= SOCKET_ADDRESS_MAX
    assert p.socket_path(tmp_path / "agent", one) == tmp_path / "agent" / "run" / "agent" / p.socket_name(one)
