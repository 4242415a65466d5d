"""Item 9: the cache-read shares of turns and compactions against the scripted server (a short
run here; `eukhe memory simulate --messages 3000 --cache` is the measured one), why the bytes not
read were not, and the picture of the shares."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from eukhe.commands.memory_cache import CAUSES, SERIES, Labels, Shares, _message, cause, measure, relation, scripted_reply, series, svg, view_end, view_of
from eukhe.memory import NODE
from eukhe.memory.prompts import compress_task, merge_task, turn_text
from eukhe.memory.records import Kind


@pytest.fixture(scope="module")
def short() -> Shares:
    return measure(80, seed=7)


def test_a_short_chat_reads_most_of_its_turns_from_cache(short: Shares) -> None:
    stats = short.stats()
    assert stats["messages"] == 80 and stats["turns"] > 10 and stats["compactions"] > 10
    assert 50.0 < stats["turn_cache_read_percent"] <= 100.0
    assert 50.0 < stats["compaction_cache_read_percent"] <= 100.0
    assert stats["rewritten_lines_per_message"] == 0.0  # 80 messages never pass 128 KB
    # the marked prefix excludes the call's own end, so more of it is read
    assert stats["turn_prefix_read_percent"] >= stats["turn_cache_read_percent"]
    assert stats["compaction_prefix_read_percent"] >= stats["compaction_cache_read_percent"]
    # the whole view (with its unmarked lines and </chat>) is more than its marked prefix
    assert stats["turn_cache_read_percent"] <= stats["turn_view_read_percent"] < stats["turn_prefix_read_percent"]
    assert stats["compaction_view_read_percent"] < stats["compaction_prefix_read_percent"]
    assert len(short.view_end) == len(short.accounts) and all(n >= len("</chat>") for n, a in zip(short.view_end, short.accounts) if a.label != "other")


def test_why_accounts_for_every_byte_of_input(short: Shares) -> None:
    stats = short.stats()
    turns = [a for a in short.accounts if a.label.startswith("turn")]
    assert len(turns) == stats["turns"]  # turns are never cancelled
    assert stats["compaction_calls_sent"] >= stats["compactions"]  # stopped calls send input, get no usage
    for kind in ("turns", "compactions"):
        why = stats["why"][kind]
        assert set(why["percent"]) <= set(CAUSES)
        assert sum(why["percent"].values()) == pytest.approx(100.0, abs=0.05)
        assert why["calls"]["first"] == 1
        assert why["percent"]["end"] > 0
    # the server's accounting and the clients' usage agree on the turns
    assert sum(a.usage.cache_read for a in turns) == sum(a.bytes.get(("prefix", "read"), 0) + a.bytes.get(("end", "read"), 0) for a in turns)
    assert stats["why"]["turns"]["percent"]["read"] == pytest.approx(stats["turn_cache_read_percent"], abs=0.06)
    for a in short.accounts:
        assert a.usage.cache_read + a.usage.cache_write + a.usage.input == a.total


def test_the_scripted_model_fills_a_line_for_each_compaction_task() -> None:
    """The measured views are as long as a real model's would make them: every compaction task
    the memory writes gets a line of 400 to 512 bytes, a turn a short reply."""
    tasks = [compress_task(7, "user", "x" * n) for n in range(0, 3_000, 97)]
    tasks += [merge_task("0+1", "1+1", 0, 1, "a" * n, "b") for n in range(0, 1_000, 61)]
    lengths = {len(scripted_reply(task)) for task in tasks}
    assert min(lengths) >= 400 and max(lengths) <= NODE and len(lengths) > 10
    assert all(scripted_reply(task).startswith("summary summary") for task in tasks)
    assert scripted_reply(turn_text("compress this, please")) == "ok"


def test_each_turn_sends_the_message_as_a_turn_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measure's turns are turns: each turn call ends with the new message, marked ``Turn:``,
    with its words (the server's own record of every request is the judge)."""
    import spec.loopback

    servers: list[spec.loopback.LoopbackServer] = []

    class Kept(spec.loopback.LoopbackServer):
        def __enter__(self) -> spec.loopback.LoopbackServer:
            servers.append(self)
            return super().__enter__()

    monkeypatch.setattr(spec.loopback, "LoopbackServer", Kept)
    shares = measure(20, seed=7)
    (server,) = servers
    # a call's one user message: the view's blocks, then after </chat> the turn's text or a task
    lasts = ["".join(b["text"] for b in r.body["messages"][-1]["content"]).rpartition("</chat>\n\n")[2] for r in server.requests if isinstance(r.body, dict)]
    turns = [text for text in lasts if text.startswith(turn_text(""))]
    assert len(turns) == shares.turns > 3
    assert all(len(text) > len(turn_text("")) for text in turns)
    assert len(lasts) == len(turns) + shares.stats()["compaction_calls_sent"]  # the rest are compaction tasks


def test_a_call_relates_to_the_call_before_of_its_kind() -> None:
    assert relation(None, ["a"]) == "first"
    assert relation(["a", "b"], ["a", "b", "c"]) == "grown"
    assert relation(["a", "b"], ["a", "b"]) == "grown"
    assert relation(["a", "b", "c"], ["a", "b"]) == "shorter"
    assert relation(["a", "b", "c"], ["a", "x", "c", "d"]) == "rewritten"
    assert view_of("<chat>\n0+1|a\n1+1|b\n</chat>\n\nTurn: hi") == ["0+1|a", "1+1|b"]
    labels = Labels()

    def request(*texts: str) -> dict[str, object]:
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": t} for t in texts]}]}

    assert labels(request("<chat>\n", "0+1|a\n</chat>\n\nTurn: x")) == "turn:first"
    assert labels(request("<chat>\n", "0+1|a\n</chat>\n\nCompaction: y")) == "compaction:first"
    assert labels(request("<chat>\n0+1|a\n", "1+1|b\n</chat>\n\nTurn: z")) == "turn:grown"
    assert labels(request("<chat>\n0+2|ab\n</chat>\n\nTurn: z")) == "turn:rewritten"
    assert labels(request("<chat>\n</chat>\n\nCompaction: y")) == "compaction:shorter"
    assert labels({}) == labels(None) == "other"  # a body the server could not read
    assert labels.view_end[:4] == [len("0+1|a\\n</chat>"), len("0+1|a\\n</chat>"), len("1+1|b\\n</chat>"), len("<chat>\\n0+2|ab\\n</chat>")]


def test_each_byte_not_read_has_its_cause() -> None:
    assert cause("turn:grown", "prefix", "read") == "read"
    assert cause("turn:grown", "end", "new") == "end"
    assert cause("turn:rewritten", "prefix", "lookback") == "lookback"
    assert cause("turn:grown", "prefix", "new") == "grown"
    assert cause("turn:grown", "prefix", "unmarked") == "unmarked"
    assert cause("turn:rewritten", "prefix", "unmarked") == "kept"
    assert cause("turn:rewritten", "prefix", "new") == "rewritten"
    assert cause("compaction:shorter", "prefix", "new") == "shorter"
    assert cause("compaction:first", "prefix", "new") == "first"


def test_a_message_kind_follows_its_size_class() -> None:
    r = random.Random(5)
    seen: dict[Kind, list[int]] = {}
    for _ in range(2_000):
        kind, length = _message(r)
        seen.setdefault(kind, []).append(length)
    assert set(seen) == {Kind.USER, Kind.EUKHE, Kind.TOOL, Kind.ECHO}
    assert max(seen[Kind.USER]) <= 400 and min(seen[Kind.ECHO]) >= 1_000
    assert 0.25 < len(seen[Kind.USER]) / 2_000 < 0.35  # a turn at about 3 messages in 10


def test_the_picture_holds_the_series(short: Shares) -> None:
    data = series(short)
    assert set(data) == set(SERIES) and all(len(v) == 80 for v in data.values())
    stats = short.stats()
    assert data["turns_prefix"][-1] == pytest.approx(stats["turn_prefix_read_percent"], abs=0.06)
    assert data["compactions_prefix"][-1] == pytest.approx(stats["compaction_prefix_read_percent"], abs=0.06)
    assert data["rewritten"][-1] == stats["rewritten_lines_per_message"] == 0.0
    root = ET.fromstring(svg(short, 7))
    lines = {p.get("id") or "": p for p in root.iter("{http://www.w3.org/2000/svg}polyline")}
    assert set(lines) == set(SERIES)
    for name, line in lines.items():
        values = [float(v) for v in (line.get("data-values") or "").split()]
        assert values == pytest.approx(data[name]) and len((line.get("points") or "").split()) == 80
    assert "80 messages, seed 7" in "".join(root.itertext())


def test_rewritten_lines_are_counted_per_message() -> None:
    """The lines the view's batches rewrote, per message so far (a short run rewrites none, so a
    trace is written here by hand: 0, 0, 3 and 3 lines rewritten after messages 1 to 4)."""
    shares = Shares(4, 0, 0, 0, 0, 0, 0, rewritten=3, trace=[(0, 0), (0, 0), (0, 3), (0, 3)])
    assert series(shares)["rewritten"] == [0.0, 0.0, 1.0, 0.75]
    assert shares.stats()["rewritten_lines_per_message"] == 0.75
    shares = Shares(3, 0, 0, 0, 0, 0, 0, rewritten=1, trace=[(0, 0), (0, 1), (0, 1)])
    assert series(shares)["rewritten"] == [0.0, 0.5, 0.3333]
    assert shares.stats()["rewritten_lines_per_message"] == 0.33


def test_a_long_run_is_drawn_at_every_kth_message(short: Shares) -> None:
    import eukhe.commands.memory_cache as mc

    old = mc.MAX_POINTS
    mc.MAX_POINTS = 30
    try:
        root = ET.fromstring(svg(short))
    finally:
        mc.MAX_POINTS = old
    line = next(p for p in root.iter("{http://www.w3.org/2000/svg}polyline") if p.get("id") == "turns")
    messages = [int(m) for m in (line.get("data-messages") or "").split()]
    assert messages == [3 * k for k in range(1, 27)] + [80]
