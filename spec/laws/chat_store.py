"""The fold law of the chat memory on disk (area optchat; derived: memory.md D1, D8, F1, rule 25;
issue 11 item 7). Registered here beside spec/laws/optchat.py with ``area="optchat"``.

store_fold_is_live: for every history of messages, calls that end or fail, turns that wait and
restarts, and for every crash point (every prefix of the lines the history wrote), the chat
reopened from the log has the live chat's view and shrinking flag at that point: the live chat
after the event whose lines the prefix cuts when its message line is in the prefix, before it
otherwise; except D8's case, where the cut loses the batch line of a message that passed the
ceiling from a view that was not shrinking: then the reopened view is the view before it with
the message's line appended, not shrinking (the batch runs at the next message).

Why bounded: the histories are unbounded and the fold's claim is about sequences of batches of
any length; no finite type covers them. Evidence: every history of the alphabet below up to
``LENGTH`` events (each crash point of its last event; the crash points of earlier events are
those of its prefixes, also enumerated), then Hypothesis over long histories of any sizes,
budgets and job counts with a crash at any line. Production (``eukhe.memory.durable``, its lines
encoded and decoded by ``eukhe.memory.records``, reopened by ``eukhe.memory.fold``) runs the same
histories under the same law, and its reopened view must also equal the model's.

The judge is the live chat, never the fold: the fold is checked against a chat that never
restarted through its own log.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from bend.optchat import chat as C
from bend.optchat.fold import Log, Msg, logged, restart
from bend.optchat.node import name
from bend.optchat.text import filler
from eukhe.memory.chat import Config
from eukhe.memory.durable import DurableChat
from eukhe.memory.records import MergeLine, Message, NodeLine, decode, encode
from eukhe.memory.view import Node
from spec.evidence import Evidence, all_of, also, bounded, examples
from spec.registry import BOUNDED, TESTED, law

SMALL = C.Config(jobs=2, ceiling=150, floor=100, cceiling=100, cfloor=50)
ALPHABET: tuple[tuple[Any, ...], ...] = (("m", 60), ("m", 700), ("done", 0, 90), ("fail", 0), ("wait",), ("restart",))
LENGTH = 4
CAP = 40
CLOCK = "2026-11-30T12:00:00+00:00"

Nodes = tuple[Node, ...]
Case = tuple[C.Config, tuple[tuple[Any, ...], ...]]


def _prod_config(config: C.Config) -> Config:
    return Config(config.jobs, config.ceiling, config.floor, config.cceiling, config.cfloor)


def _step(chat: C.Chat, log: Log, event: tuple[Any, ...]) -> tuple[C.Chat, Log]:
    kind = event[0]
    if kind == "restart":
        return restart(chat, log)
    if kind == "m":
        after = C.message(chat, filler(f"m{chat.t}", event[1]))
    elif kind == "done":
        node = chat.running[event[1] % len(chat.running)] if chat.running else (0, 0)
        after = C.done(chat, event[1], filler(name(node), event[2]))
    elif kind == "fail":
        after = C.fail(chat, event[1])
    else:
        after = C.wait(chat)
    return after, log + logged(chat, after)


def expected(before: C.Chat, after: C.Chat, new: Log, cut: int) -> tuple[Nodes, bool]:
    """The live view and shrinking flag a crash after ``cut`` of an event's ``new`` lines must
    reopen to (the law's statement, D8)."""
    if not new or not isinstance(new[0], Msg) or cut == 0:
        full = cut == len(new)
        chat = after if full else before
        return tuple(n for n, _ in chat.view), chat.open
    lost_batch = cut < len(new) and not isinstance(new[-1], NodeLine) and not isinstance(new[-1], Msg)
    if lost_batch and not before.open:
        return tuple(n for n, _ in before.view) + ((0, before.t),), False
    return tuple(n for n, _ in after.view), after.open


# -- the model ---------------------------------------------------------------------------------


def model_holds(case: Case, cuts: str = "last") -> bool:
    """The law on the model for one history: crash points of the last event (``last``) or of
    every event (``all``)."""
    config, history = case
    chat: C.Chat = C.Chat(config=config)
    log: Log = ()
    for number, event in enumerate(history):
        before, start = chat, len(log)
        chat, log = _step(chat, log, event)
        if event[0] == "restart" or (cuts == "last" and number < len(history) - 1):
            continue
        new = log[start:]
        for cut in range(len(new) + 1):
            reopened, _ = restart(before, log[: start + cut])
            got = (tuple(n for n, _ in reopened.view), reopened.open)
            if got != expected(before, chat, new, cut):
                return False
    return True


# -- production ----------------------------------------------------------------------------------


class Lines:
    """A sink keeping every line as the store would write it (bytes), in order."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, bytes]] = []

    def message(self, record: Message) -> None:
        self.lines.append(("main", encode(record)))

    def node(self, record: NodeLine) -> None:
        self.lines.append(("tree", encode(record)))

    def merge(self, record: MergeLine) -> None:
        self.lines.append(("tree", encode(record)))

    def view(self, nodes: Any) -> None:
        pass


def reopen_lines(config: Config, lines: list[tuple[str, bytes]], sink: Lines) -> DurableChat:
    """Production reopened from the lines (decoded as the store decodes its files)."""
    messages = [decode(data[:-1], tree=False) for where, data in lines if where == "main"]
    tree = [decode(data[:-1], tree=True) for where, data in lines if where == "tree"]
    assert all(isinstance(m, Message) for m in messages) and all(isinstance(t, (NodeLine, MergeLine)) for t in tree)
    return DurableChat.open(config, messages, tree, sink, lambda: CLOCK)  # type: ignore[arg-type]


def production_holds(case: Case, cuts: str = "last") -> bool:
    """The law on production, and production's reopened view equal to the model's."""
    config, history = case
    pconfig = _prod_config(config)
    sink = Lines()
    durable = DurableChat.open(pconfig, [], [], sink, lambda: CLOCK)
    model: C.Chat = C.Chat(config=config)
    log: Log = ()
    for number, event in enumerate(history):
        chat = durable.chat
        before_view, before_open, start = tuple(chat.view.nodes), chat.open, len(sink.lines)
        kind = event[0]
        if kind == "restart":
            durable = reopen_lines(pconfig, sink.lines, sink)
        elif kind == "m":
            durable.message(filler(f"m{chat.t}", event[1]))
        elif kind == "done":
            if chat.running:
                node = chat.running[event[1] % len(chat.running)]
                durable.done(event[1], filler(name(node), event[2]))
        elif kind == "fail":
            durable.fail(event[1])
        else:
            durable.wait()
        model_before = model
        model, log = _step(model, log, event)
        after = durable.chat
        if (tuple(after.view.nodes), after.open) != (tuple(n for n, _ in model.view), model.open):
            return False
        if kind == "restart" or (cuts == "last" and number < len(history) - 1):
            continue
        new = sink.lines[start:]
        for cut in range(len(new) + 1):
            reopened = reopen_lines(pconfig, sink.lines[: start + cut], Lines()).chat
            got = (tuple(reopened.view.nodes), reopened.open)
            full = cut == len(new)
            if not new or new[0][0] != "main" or cut == 0:
                want = (tuple(after.view.nodes), after.open) if full else (before_view, before_open)
            elif cut < len(new) and b'"merge"' in new[-1][1] and not before_open:
                want = (before_view + ((0, model_before.t),), False)
            else:
                want = (tuple(after.view.nodes), after.open)
            if got != want:
                return False
    return True


# -- the domain ------------------------------------------------------------------------------------


def histories(length: int = LENGTH) -> Iterator[Case]:
    for size in range(1, length + 1):
        for history in itertools.product(ALPHABET, repeat=size):
            yield SMALL, history


@functools.lru_cache(maxsize=None)
def _label() -> str:
    count = sum(len(ALPHABET) ** k for k in range(1, LENGTH + 1))
    return (
        f"every history of {len(ALPHABET)} events (messages of 60 and 700 bytes, the oldest call ending with a 90-byte line or failing, "
        f"a turn waiting, a restart) of 1..{LENGTH} events ({count:,} histories), 2 jobs, budgets 150/100 and 100/50, "
        f"every crash point of each history's last event"
    )


configs = st.builds(
    lambda jobs, ceiling, f, cceiling, cf: C.Config(jobs, ceiling, ceiling * f // 4, cceiling, cceiling * cf // 4),
    st.integers(1, 8),
    st.integers(0, 6_000),
    st.integers(0, 4),
    st.integers(0, 3_000),
    st.integers(0, 4),
)
events = st.lists(
    st.one_of(
        st.tuples(st.just("m"), st.one_of(st.integers(1, 512), st.integers(513, 3_000), st.sampled_from([1, 512, 513]))),
        st.tuples(st.just("m"), st.integers(1, 900)),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, 512)),
        st.tuples(st.just("done"), st.integers(0, 7), st.integers(1, 512)),
        st.tuples(st.just("fail"), st.integers(0, 7)),
        st.tuples(st.just("wait"),),
        st.tuples(st.just("restart"),),
    ),
    max_size=CAP,
)


@law(
    "store_fold_is_live",
    "memory D1, D8, F1, rule 25",
    "For every history and every crash point the chat reopened from its log (view folded from the logged merges, "
    "shrinking flag from the last merge line) has the live view, except D8's deferred batch.",
    BOUNDED,
    area="optchat",
    derivation="memory.md D1 (the view folded from messages and merge lines, same parts, same bytes), F1, D8; issue 11",
)
def fold_is_live() -> Evidence:
    model = also(
        bounded(histories(), model_holds, label=_label()),
        examples(lambda config, history: model_holds((config, tuple(history)), "all"), config=configs, history=events),
    )
    production = also(
        bounded(histories(), production_holds, label=_label()),
        examples(lambda config, history: production_holds((config, tuple(history)), "all"), config=configs, history=events),
    )
    return model.with_production(production)


# -- production-only laws of the store (derived: memory.md rules 1-10, D1, D2, D3, F1) -------------
# These judge eukhe.memory directly: the store has no model twin (the model keeps its log as a
# tuple). The judges are spec.oracles.chat_store (the seed's fields and kinds as data) and plain
# comparisons with what was written.

import json as _json  # noqa: E402
import tempfile  # noqa: E402
import stat  # noqa: E402
from pathlib import Path  # noqa: E402

from eukhe.memory import daylog  # noqa: E402
from eukhe.memory import lines as L  # noqa: E402
from eukhe.memory.fold import FoldError  # noqa: E402
from eukhe.memory import index  # noqa: E402
from eukhe.memory.index import MessageLog, TreeLog  # noqa: E402
from eukhe.memory.records import CorruptLine, IdGap, Kind, LostLines, Record, StoreError, Torn  # noqa: E402
from eukhe.memory.store import Store  # noqa: E402
from spec.oracles import chat_store as O  # noqa: E402

_GOOD = {
    "message": {"i": 3, "kind": "user", "text": "ζ ok", "size": 5, "date": CLOCK},
    "node": {"l": 1, "i": 2, "text": "a line", "size": 6},
    "merge": {"merge": [[1, 0], [2, 1]], "open": True, "t": 9},
}
_FIELDS = {"message": O.MESSAGE_FIELDS, "node": O.NODE_FIELDS, "merge": O.MERGE_FIELDS}


def _malformed() -> Iterator[tuple[str, dict[str, Any] | bytes, bool]]:
    """Every line shape: each field missing, each field given each JSON type, an unknown field,
    kinds old and unknown, and lines that are no JSON object; with the oracle's verdict."""
    for shape, good in _GOOD.items():
        yield shape, dict(good), True
        fields = _FIELDS[shape]
        for field_name, kind in fields.items():
            missing = {k: v for k, v in good.items() if k != field_name}
            yield shape, missing, shape == "merge" and field_name == "open"  # F1: old lines without open read as false
            for label, value in O.VALUES.items():
                body = dict(good)
                body[field_name] = value
                if field_name == "text" and isinstance(value, str):
                    body["size"] = O.size_of(value)
                ok = label in O.ACCEPTS[kind]
                if field_name == "size":
                    ok = value == O.size_of(str(good["text"]))
                if field_name == "merge" and value == []:
                    ok = True
                yield shape, body, ok
        yield shape, dict(good, extra=1), False
    for kind in O.KINDS + tuple(O.OLD_KINDS) + ("thought", "unii"):
        yield "message", dict(_GOOD["message"], kind=kind), kind in O.KINDS or kind in O.OLD_KINDS
    yield "message", dict(_GOOD["message"], key="k1"), True
    yield "message", dict(_GOOD["message"], key=5), False
    for bad_pairs in ([[1]], [[1, -1]], [[1, "a"]], [[True, 0]], "x"):
        yield "merge", dict(_GOOD["merge"], merge=bad_pairs), False
    for raw in (b"[]", b"1", b'"text"', b"{", b"\xff\xfe", b"", b"null"):
        yield "message", raw, False
        yield "node", raw, False


def _line(body: dict[str, Any] | bytes) -> bytes:
    return body if isinstance(body, bytes) else _json.dumps(body, ensure_ascii=False).encode("utf-8")


def _reads(case: tuple[str, dict[str, Any] | bytes, bool]) -> bool:
    shape, body, ok = case
    line = _line(body)
    tree = shape != "message"
    try:
        record = decode(line, tree=tree)
    except ValueError:
        return not ok and _logged(shape, body, None)
    if not ok:
        return False
    assert isinstance(body, dict)
    if isinstance(record, Message):
        kind = O.OLD_KINDS.get(str(body["kind"]), str(body["kind"]))
        same = (record.i, record.kind.value, record.text, record.date, record.key) == (body["i"], kind, body["text"], body["date"], body.get("key"))
    elif isinstance(record, NodeLine):
        same = record == NodeLine((body["l"], body["i"]), body["text"])
    else:
        assert isinstance(record, MergeLine)
        same = record == MergeLine(tuple((p[0], p[1]) for p in body["merge"]), bool(body.get("open", False)), body["t"])
    return same and decode(encode(record)[:-1], tree=tree) == record and _logged(shape, body, record)


def _logged(shape: str, body: dict[str, Any] | bytes, record: Record | None) -> bool:
    """The line read by the store's scan (``eukhe.memory.index``, which frames lines written as
    ``encode`` writes them and decodes the others) as ``decode`` reads it: as written, compact,
    and (a record) as ``encode`` writes it. A record reads back (a message after the ids before
    it); a refused line is an error naming its line when a good line follows it, and a torn tail
    when it is the last."""
    tree = shape != "message"
    forms = {_line(body)}
    if isinstance(body, dict):
        forms.add(_json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    if record is not None:
        forms.add(encode(record)[:-1])
    for line in forms:
        with tempfile.TemporaryDirectory() as where:
            folder = Path(where)
            day = folder / "2026-11-30.jsonl"
            if isinstance(record, Message):
                if record.i > 3:
                    continue  # a gap: the store's test a_gap_in_message_ids_is_an_error
                before = [Message(i, Kind.USER, f"m{i}", CLOCK) for i in range(record.i)]
                day.write_bytes(b"".join(encode(m) for m in before) + line + b"\n")
                messages = MessageLog(folder)
                messages.close()
                if list(messages) != before + [record] or messages.keys != ({} if record.key is None else {record.key: record.i}):
                    return False
                continue
            if record is not None:
                day.write_bytes(line + b"\n")
                nodes = TreeLog(folder, 10**13)
                nodes.close()
                if list(nodes) != [record]:
                    return False
                continue
            follow = encode(NodeLine((0, 0), "a") if tree else Message(0, Kind.USER, "a", CLOCK))
            day.write_bytes(line + b"\n" + follow)
            try:
                TreeLog(folder, 10) if tree else MessageLog(folder)
                return False
            except CorruptLine as error:
                if error.line != 1:
                    return False
            day.write_bytes(follow + line + b"\n")
            last = TreeLog(folder, 10) if tree else MessageLog(folder)
            if len(last) != 1 or last.tail.torn != 2:
                return False
            last.close()
    return True


records = st.one_of(
    st.builds(Message, st.integers(0, 10**12), st.sampled_from(list(Kind)), st.text(min_size=1), st.text(), st.one_of(st.none(), st.text())),
    st.builds(NodeLine, st.tuples(st.integers(0, 60), st.integers(0, 10**12)), st.text(min_size=1)),
    st.builds(MergeLine, st.lists(st.tuples(st.integers(1, 60), st.integers(0, 10**12)), max_size=8).map(tuple), st.booleans(), st.integers(0, 10**12)),
)


def _round_trip(many: list[Record]) -> bool:
    by_file: dict[bool, list[bytes]] = {False: [], True: []}
    for record in many:
        by_file[not isinstance(record, Message)].append(encode(record)[:-1])
    back = [decode(line, tree=False) for line in by_file[False]] + [decode(line, tree=True) for line in by_file[True]]
    return back == [r for r in many if isinstance(r, Message)] + [r for r in many if not isinstance(r, Message)]


def _scanned(texts: list[str], chunk: int) -> bool:
    """Messages and node lines of any text written as the store writes them read back whole
    through the store's scan when it reads the files in pieces of ``chunk`` bytes (pieces cut
    inside lines, lines longer than a piece), with each node's size in the planner's rows."""
    messages = [Message(i, Kind.USER, text or "x", CLOCK) for i, text in enumerate(texts)]
    nodes = [NodeLine((0, i), text or "x") for i, text in enumerate(texts)]
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        (folder / "tree").mkdir()
        (folder / "2026-11-30.jsonl").write_bytes(b"".join(encode(m) for m in messages))
        (folder / "tree" / "2026-11-30.jsonl").write_bytes(b"".join(encode(n) for n in nodes))
        before, index.CHUNK = index.CHUNK, chunk
        try:
            got, tree = MessageLog(folder), TreeLog(folder / "tree", len(texts))
        finally:
            index.CHUNK = before
        same = list(got) == messages and list(tree) == nodes and tree.rows[0] == [O.size_of(n.text) for n in nodes]
        texts_back = all(tree.text(n.node) == n.text and got.text(n.node[1]) == n.text for n in nodes)
        got.close()
        tree.close()
        return same and texts_back and tree.problem is None and got.gap is None


@law(
    "store_lines_read_back",
    "memory rule 1, D2, D3, F1",
    "Every log line reads back as the record written; every malformed line (a field missing, of any wrong type, unknown, "
    "an unknown kind, no JSON object) is refused, as the seed's fields say; old talk lines read as eukhe.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 1 (the fields), D2 (key), D3 (talk), F1 (merge lines); judged by spec.oracles.chat_store",
)
def log_lines_read_back() -> Evidence:
    cases = list(_malformed())
    return also(
        bounded(cases, _reads, label="every line shape of the three line kinds: each field missing or of each JSON type, unknown fields, every kind, non-objects"),
        examples(_round_trip, many=st.lists(records, max_size=CAP)),
        examples(_scanned, texts=st.lists(st.text(), max_size=CAP), chunk=st.integers(1, 400)),
    )


# The lines of these cases are written by the law (spec.oracles.chat_store: rule 1's fields, one
# JSON object per line), never by the store's encoder. The termination of a torn tail is the store's
# own (a newline, then its marker line): the crash of a writer while it terminates is simulated by
# letting the store's writer terminate the same tail in a scratch copy and keeping a prefix of the
# bytes it added.

_GOOD_LINES = [O.message_line(0, "user", "one", CLOCK), O.message_line(1, "eukhe", "two", CLOCK)]
_GOOD_RECORDS = [Message(0, Kind.USER, "one", CLOCK), Message(1, Kind.EUKHE, "two", CLOCK)]
_THIRD = O.message_line(2, "tool", "three ζ", CLOCK)
_THIRD_RECORD = Message(2, Kind.TOOL, "three ζ", CLOCK)
_AFTER = Message(2, Kind.NOTE, "after", CLOCK)


@functools.cache
def _termination(data: bytes) -> bytes:
    """What the store's writer adds to a day file holding ``data`` (a torn tail) before its next
    line: the bytes up to the first line it wrote itself, found in a scratch copy."""
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        day = folder / "2026-11-30.jsonl"
        day.write_bytes(data)
        read = MessageLog(folder)
        read.close()
        appender = daylog.Appender(folder, read.tail, lambda: "2026-11-30")
        appender.append(_AFTER)
        appender.close()
        added = day.read_bytes()[len(data) :]
    lines = added.splitlines(keepends=True)
    if len(lines) < 2 or _json.loads(lines[-1]).get("text") != "after":
        raise AssertionError(f"the store's writer added {added!r} after a torn tail")
    return added[: len(added) - len(lines[-1])]


def _torn(case: tuple[int, int]) -> bool:
    """A log of three lines whose last line is cut after ``cut`` bytes, then (``term`` > 0) a
    writer killed after ``term`` bytes of its termination: the reader skips the tail, the next
    writer marks it and appends; nothing before the cut is rewritten."""  # noqa: D401
    cut, term = case
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        good, third = _GOOD_RECORDS, _THIRD
        data = b"".join(_GOOD_LINES) + third[:cut]
        inside = cut not in (0, len(third))
        marker = _termination(data) if inside else b""
        if term and inside:
            data += marker[:term]
        day = folder / "2026-11-30.jsonl"
        day.write_bytes(data)
        read = MessageLog(folder)
        # a line all of whose bytes but its newline were written, then terminated by the next writer
        # before it was killed, reads whole: every byte the writer wrote is there (D2's key keeps a
        # retry of it from being logged twice); a whole marker that lost only its newline still
        # marks the line torn
        whole = cut == len(third) or (cut == len(third) - 1 and 0 < term < len(marker) - 1)
        expected = good + ([_THIRD_RECORD] if whole else [])
        if list(read) != expected:
            return False
        read.close()
        appender = daylog.Appender(folder, read.tail, lambda: "2026-11-30")
        appender.append(Message(len(expected), Kind.NOTE, "after", CLOCK))
        appender.close()
        again = MessageLog(folder)
        again.close()
        return day.read_bytes().startswith(data) and list(again) == expected + [Message(len(expected), Kind.NOTE, "after", CLOCK)]


_TREE_CORRUPT: dict[str, list[bytes]] = {
    "merge lines out of order": [O.node_line(0, 0, "a"), O.node_line(0, 1, "b"), O.node_line(1, 0, "a\nb"), O.merge_line([], True, 3), O.merge_line([], True, 2)],
    "a merge past its messages": [O.node_line(0, 0, "a"), O.merge_line([(1, 1)], True, 2)],
    "a merge of a message": [O.merge_line([(0, 0)], True, 2)],
    "a merge inside an earlier one": [O.merge_line([(2, 0)], True, 4), O.merge_line([(1, 0)], True, 4)],
    "a node logged twice": [O.node_line(0, 0, "a"), O.node_line(0, 0, "a")],
    "a node past the chat": [O.node_line(0, 9, "a")],
}


def _corrupt(case: str) -> bool:
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        one, two = O.message_line(0, "user", "a", CLOCK), O.message_line(1, "user", "b", CLOCK)
        if case == "middle":
            (folder / "2026-11-30.jsonl").write_bytes(one + b"oops\n" + two)
            expect: type[Exception] = CorruptLine
        elif case == "older file torn":
            (folder / "2026-11-29.jsonl").write_bytes(one + b'{"i":1')
            (folder / "2026-11-30.jsonl").write_bytes(two)
            expect = CorruptLine
        elif case == "marker out of place":
            # the store's marker of a torn line 5 (four lines, then a cut one), put on line 2
            four = b"".join(O.message_line(i, "user", "x", CLOCK) for i in range(4))
            marker = _termination(four + b'{"i"').lstrip(b"\n")
            (folder / "2026-11-30.jsonl").write_bytes(one + marker + two)
            expect = CorruptLine
        elif case in _TREE_CORRUPT:
            (folder / "2026-11-30.jsonl").write_bytes(b"".join(O.message_line(i, "user", "x" * 600, CLOCK) for i in range(4)))
            (folder / "tree").mkdir()
            (folder / "tree" / "2026-11-30.jsonl").write_bytes(b"".join(_TREE_CORRUPT[case]))
            try:
                store = Store(folder, now=lambda: CLOCK)
                DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
            except FoldError as error:
                return "t=" in str(error) or "node" in str(error)
            return False
        elif case == "unwritable":
            (folder / "2026-11-30.jsonl").mkdir()  # the day file cannot be opened for writing
            appender = daylog.Appender(folder, daylog.Tail(None, 0, True), lambda: "2026-11-30")
            refused = 0
            for _ in range(2):
                try:
                    appender.append(Message(0, Kind.USER, "a", CLOCK))
                except StoreError:
                    refused += 1
            return refused == 2 and appender.failed is not None
        elif case == "gap":
            (folder / "2026-11-30.jsonl").write_bytes(one + O.message_line(2, "user", "c", CLOCK))
            expect = IdGap
        else:
            (folder / "2026-11-30.jsonl").write_bytes(one + two)
            (folder / "notes.txt").write_text("not a day file")
            (folder / "2026-1-30.jsonl").write_text("not a day file either")
            store = Store(folder, now=lambda: CLOCK)
            store.close()
            return [m.text for m in store.messages] == ["a", "b"]
        try:
            Store(folder, now=lambda: CLOCK).close()
        except expect as error:
            return "line" in str(error) and str(folder) in str(error)
        return False


@law(
    "store_torn_tail_is_skipped",
    "memory rules 2, 6",
    "A torn last line (cut at any byte, also while a writer was terminating it) is skipped and terminated, and nothing "
    "before it is rewritten; any other bad line, a torn tail in an older day file, or a gap in message ids is an error naming file and line.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 6 (append only, flush every write) and the store's test a_torn_last_line_is_skipped_and_terminated",
)
def torn_tail_is_skipped() -> Evidence:
    third = len(_THIRD)
    marker = len(_termination(b"".join(_GOOD_LINES) + _THIRD[:1]))
    return all_of(
        bounded(((c, t) for c in range(third + 1) for t in (0, 1, marker // 2, marker - 1)), _torn,
                label=f"every cut 0..{third} of the last line (lines written from rule 1's fields), and cuts of the store's termination of it"),
        bounded(
            ["middle", "older file torn", "marker out of place", "gap", "stray files", "unwritable", *_TREE_CORRUPT],
            _corrupt,
            label="a bad middle line, a torn older file, a misplaced marker, a gap, stray files, an unwritable day file, merge and node lines that do not fold",
        ),
    )


# "no cover": pairs that are no view of any chat (not contiguous from message 0; one of them past
# the log's 12 messages): no evidence of lost lines (D1), a stale check like any other wrong view.json
_SAVED = {
    "missing": None, "stale": "[[0,0]]", "no cover": "[[0,1],[0,50]]", "not json": "{", "an object": "{}", "a bad pair": '[[0,"a"]]',
    "a bool": "[[true,0]]", "short pair": "[[0]]",
}


def _saved(case: tuple[str, str | None]) -> bool:
    label, content = case
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where) / "chat"
        store = Store(folder, now=lambda: CLOCK)
        durable = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
        for n in range(12):
            durable.message(filler(f"m{n}", 60 if n % 3 else 700))
            while durable.chat.running and n % 2:
                durable.done(0, filler("line", 90))
        live = (tuple(durable.chat.view.nodes), tuple(durable.chat.view.sizes), durable.chat.open)
        try:
            durable.message("")
            return False
        except ValueError:
            pass
        store.save_image(0, "shot.png", b"\x89PNG")  # rule 53: a message's images, kept beside the log
        refused = 0
        for bad in ("", "../x", ".hidden"):
            try:
                store.save_image(0, bad, b"")
            except StoreError:
                refused += 1
        store.close()
        if refused != 3 or [p.name for p in store.images(0)] != ["shot.png"] or store.images(1):
            return False
        saved = folder / "view.json"
        if content is None:
            saved.unlink()
        else:
            saved.write_text(content)
        store = Store(folder, now=lambda: CLOCK)
        again = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
        verdict = store.check(again.chat.view.nodes)
        store.close()
        want = {"missing": "missing", "stale": "stale", "no cover": "stale", "short pair": "unreadable"}.get(label, "unreadable")
        return (tuple(again.chat.view.nodes), tuple(again.chat.view.sizes), again.chat.open) == live and verdict == want and again.size_of(0) == 700


@law(
    "store_saved_view_is_a_check",
    "memory rule 25, D1",
    "view.json lost, stale or unreadable gives the identical view: the view is folded from the log and checked against it.",
    BOUNDED,
    area="optchat",
    derivation="memory.md D1 and the test deleting_the_saved_view_reproduces_the_identical_view",
)
def saved_view_is_a_check() -> Evidence:
    return bounded(sorted(_SAVED.items(), key=lambda kv: kv[0]), _saved, label="a history of 12 messages (an image kept for message 0) with view.json missing, stale, no cover, not JSON, an object, a bad pair, a bool, a short pair")


def _capped(text: str, cap: int) -> bool:
    out = L.cap_text(text, cap)
    if len(text) <= cap:
        return out == text
    head, marker, rest = out.partition("\n[... ")
    number, _, tail = rest.partition(" characters clipped ...]\n")
    return bool(marker) and len(out) == cap and text.startswith(head) and text.endswith(tail) and len(head) + int(number) + len(tail) == len(text)


def _split(text: str, cap: int) -> bool:
    pieces = L.split_text(text, cap)
    return "".join(pieces) == text and all(len(p) <= cap for p in pieces) and all(pieces[:-1]) and (len(pieces) == 1 or all(len(p) > cap // 2 or p.endswith("\n") for p in pieces[:-1]))


_BLOCKS: list[tuple[dict[str, object], list[tuple[str, str]]]] = [
    ({"type": "thinking", "text": "secret"}, []),
    ({"type": "user", "text": "hi"}, [("user", "hi")]),
    ({"type": "user", "text": ""}, []),
    ({"type": "text", "text": "reply"}, [("eukhe", "reply")]),
    ({"type": "tool_use", "name": "read", "input": {"path": "a"}}, [("tool", 'read {"path": "a"}')]),
    ({"type": "tool_result", "text": "out"}, [("echo", "out")]),
    ({"type": "report", "name": "Scout", "text": "done"}, [("work", "[Scout] done")]),
]


def _entries(case: tuple[dict[str, object], list[tuple[str, str]]]) -> bool:
    block, want = case
    return [(k.value, t) for k, t in L.conversation_lines([block])] == want


@law(
    "store_texts_whole_or_clipped",
    "memory rules 3, 8, 9, 10",
    "Tool output is clipped to head and tail, 30,000 characters in all; any other long text becomes consecutive messages "
    "whose join is the text; thoughts are never logged; each block logs as its kind.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rules 8-10 and the tests cap_keeps_head_and_tail_within_the_cap, long_texts_split_into_messages_without_losing_anything",
)
def logged_texts_are_whole_or_clipped() -> Evidence:
    lengths = [0, 1, O.CAP - 1, O.CAP, O.CAP + 1, 2 * O.CAP, 3 * O.CAP + 5]
    texts = [("ab\nζ𝄞 " * (n // 6 + 1))[:n] for n in lengths] + [("x" * n) for n in lengths]

    def bad_block() -> bool:
        try:
            L.entry_lines({"type": "image"})
        except ValueError:
            return True
        return False

    return also(
        all_of(
            bounded(texts, lambda t: _capped(t, O.CAP) and _split(t, O.CAP), label=f"texts of {lengths} characters, with and without newlines and 4-byte characters, at the seed's cap"),
            bounded(_BLOCKS + [({"type": "tool_result", "text": "y" * (O.CAP + 9)}, [])], lambda c: _entries(c) if c[1] or c[0]["type"] != "tool_result" else len(L.entry_lines(c[0])[0][1]) == O.CAP, label="every block type"),
            bounded([0], lambda _n: bad_block(), label="an unknown block type is refused"),
        ),
        examples(lambda text, cap: _capped(text, cap) and _split(text, cap), text=st.text(max_size=400), cap=st.integers(60, 200)),
    )


# -- one owner per chat (rule 7) and import (rule 5) -----------------------------------------------

import fcntl  # noqa: E402
from datetime import datetime as _datetime  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402

from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule  # noqa: E402

from eukhe.memory.chat import ZoomError  # noqa: E402
from eukhe.memory.importer import import_sessions  # noqa: E402
from eukhe.memory.owner import Memory, status_line  # noqa: E402
from eukhe.memory.text import flatten  # noqa: E402
from eukhe.session import Store as Sessions  # noqa: E402
from eukhe.session import assistant, tool_result, user  # noqa: E402
from spec.evidence import machine  # noqa: E402


class OneOwner(RuleBasedStateMachine):
    """Handles open and close on one chat in any order; each call goes through any handle. At most
    one handle owns the chat; every append is logged once, in order, whoever takes it; a client
    whose owner closed takes over at its next call."""

    def __init__(self) -> None:
        super().__init__()
        self.where = Path(tempfile.mkdtemp(prefix="eukhe-owner-"))
        self.handles: list[Memory] = []
        self.texts: list[str] = []
        self.images: dict[int, list[tuple[str, bytes]]] = {}  # rule 53: each message's images

    @precondition(lambda self: len(self.handles) < 3)
    @rule()
    def open_handle(self) -> None:
        self.handles.append(Memory(self.where / "chat"))

    @precondition(lambda self: bool(self.handles))
    @rule(k=st.integers(0, 2))
    def close_handle(self, k: int) -> None:
        self.handles.pop(k % len(self.handles)).close()

    @precondition(lambda self: bool(self.handles))
    @rule(k=st.integers(0, 2), text=st.text(min_size=1, max_size=60), kind=st.sampled_from(["user", "eukhe", "note"]), keyed=st.booleans())
    def append(self, k: int, text: str, kind: str, keyed: bool) -> None:
        handle = self.handles[k % len(self.handles)]
        key = f"key-{len(self.texts)}" if keyed else None
        assert handle.append(text, kind, key) == [len(self.texts)]
        if keyed:
            assert handle.append(text, kind, key) == [len(self.texts)], "a key already logged is not logged again"
        self.texts.append(text)

    @precondition(lambda self: bool(self.handles))
    @rule(k=st.integers(0, 2), i=st.integers(0, 40), data=st.binary(max_size=64), base64_bad=st.booleans())
    def image(self, k: int, i: int, data: bytes, base64_bad: bool) -> None:
        """Rule 53: an image of message ``i`` is kept through any handle; one of no message, a
        name taken twice, a bad name or bytes not in base64 is refused."""
        handle = self.handles[k % len(self.handles)]
        kept = self.images.setdefault(i, []) if i < len(self.texts) else []
        name = f"shot{len(kept)}.png"
        if base64_bad:
            try:
                handle._call({"op": "image", "id": i, "name": name, "data": "*not base64*"})
            except ValueError:
                return
            raise AssertionError("bytes not in base64 were kept")
        if i >= len(self.texts):
            try:
                handle.save_image(i, name, data)
            except ValueError:
                return
            raise AssertionError("an image of no message was kept")
        path = handle.save_image(i, name, data)
        assert path.name == name and path.read_bytes() == data
        kept.append((name, data))
        for taken in (name, "../up.png", ""):
            try:
                handle.save_image(i, taken, data)
            except StoreError:
                continue
            raise AssertionError(f"the image name {taken!r} was taken")

    @precondition(lambda self: bool(self.handles))
    @rule(k=st.integers(0, 2), n=st.integers(0, 4))
    def read(self, k: int, n: int) -> None:
        handle = self.handles[k % len(self.handles)]
        status = handle.status()
        assert status["messages"] == len(self.texts) and status_line(status).startswith("mem ")
        if self.texts:
            last = len(self.texts) - 1
            zoomed = handle.zoom(last, 1)
            assert zoomed == [f"{last}+1|{flatten(self.texts[last])}"]
            assert [(p.name, p.read_bytes()) for p in zoomed.images] == sorted(self.images.get(last, []))
            assert _datetime.fromisoformat(handle.date(last)).tzinfo is not None, "a message's date has its offset"
            if last % 2 == 1:
                assert handle.zoom(last - 1, 2).images == [], "only zoom(id, 1) gives images"
        bad = (lambda: handle.zoom(0, 3), lambda: handle.zoom(len(self.texts), 1 << n), lambda: handle.date(len(self.texts)))[n % 3]
        try:
            bad()
        except (ZoomError, ValueError):
            return
        raise AssertionError("a bad zoom or date was answered")

    @invariant()
    def at_most_one_owner(self) -> None:
        assert sum(1 for h in self.handles if h.is_owner) <= 1

    def teardown(self) -> None:
        for handle in self.handles:
            handle.close()
        shutil.rmtree(self.where, ignore_errors=True)


def _protocol(case: str) -> bool:
    """The lock socket's edges: calls that are no calls, a chat directory too long for a socket
    address, an owner that holds the lock but does not answer, a log that cannot be opened."""
    from eukhe.memory import owner as owner_module

    with tempfile.TemporaryDirectory() as where:
        folder = Path(where) / "chat"
        if case == "long path":
            folder = Path(where) / ("d" * 60) / ("e" * 60) / "chat"
            with Memory(folder) as first, Memory(folder) as second:
                return first.is_owner and not second.is_owner and second.append("x") == [0] and first.view() == ["0+1|x"]
        if case == "no answer":
            folder.mkdir()
            fd = os.open(folder / owner_module.OWNER, os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX)  # an owner that holds the lock and never serves its socket
            claim, owner_module.CLAIM_SECONDS = owner_module.CLAIM_SECONDS, 0.05
            try:
                Memory(folder)
            except owner_module.MemoryBusy:
                return True
            finally:
                owner_module.CLAIM_SECONDS = claim
                os.close(fd)
            return False
        if case == "corrupt log":
            folder.mkdir()
            (folder / "2026-11-30.jsonl").write_bytes(b"oops\n" + encode(Message(0, Kind.USER, "a", CLOCK)))
            for _ in range(2):  # the second claim finds the lock released, not a busy owner
                try:
                    Memory(folder)
                    return False
                except CorruptLine:
                    pass
            return True
        with Memory(folder) as memory, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
            raw.connect(str(folder / owner_module.LOCK))
            replies = []
            with raw.makefile("rb") as reader:
                for line in (b"not json", b"[]", b'{"op": "nope"}', b'{"op": "append", "text": ""}', b'{"op": "date", "id": 9}', b'{"op": "zoom", "id": 0, "n": 3}'):
                    raw.sendall(line + b"\n")
                    replies.append(_json.loads(reader.readline()))
            return all("error" in r for r in replies) and memory.status()["messages"] == 0


@law(
    "store_one_owner",
    "memory rule 7, §7.12, D2",
    "Whatever handles open and close, at most one owns the chat; appends through any handle are logged once, in order; "
    "a client whose owner is gone takes over at its next call.",
    TESTED,
    area="optchat",
    derivation="memory.md rule 7 and the tests a_second_handle_is_a_client_and_takes_over, a_stale_socket_is_taken_over",
)
def store_one_owner() -> Evidence:
    return all_of(
        machine(OneOwner),
        bounded(["calls that are no calls", "long path", "no answer", "corrupt log"], _protocol, label="the lock socket's edges: bad calls, a long directory, an owner that does not answer, a log that cannot open"),
    )


def _sessions(case: str, root: Path) -> list[str]:
    """Make the sessions of ``case`` and return the notes the seed's rule 5 asks for, in order."""
    sessions = Sessions(root)
    with sessions.create("20260301T000000-0000000a") as first:
        ids = first.conversation().commit([user("plan"), assistant([{"type": "text", "text": "ok"}, {"type": "thinking", "text": "hidden"}])])
    notes = ["[session 20260301T000000-0000000a] user: plan", "[session 20260301T000000-0000000a] assistant: ok"]
    if case in ("fork", "all"):
        forked = sessions.fork("20260301T000000-0000000a", ids[-1], new_id="20260302T000000-0000000b")
        with sessions.open(forked) as second:
            second.conversation().commit([user("more")])
        notes.append("[session 20260302T000000-0000000b] user: more")
    if case == "all":
        with sessions.open("20260302T000000-0000000b") as second:
            second.conversation().commit([assistant(["plain words"]), assistant([{"type": "image"}])])
        notes += ["[session 20260302T000000-0000000b] assistant: plain words", '[session 20260302T000000-0000000b] assistant: [{"type": "image"}]']
    if case in ("older", "all"):
        with sessions.create("20250101T000000-0000000c") as older:
            older.conversation().commit([tool_result({"data": [1, 2]}), user("plan")])
        notes = ['[session 20250101T000000-0000000c] tool_result: {"data": [1, 2]}', "[session 20250101T000000-0000000c] user: plan"] + notes
    return notes


def _imports(case: str) -> bool:
    with tempfile.TemporaryDirectory() as where:
        root = Path(where)
        notes = _sessions(case, root / "sessions")
        with Memory(root / "chat") as memory:
            done = import_sessions(memory, Sessions(root / "sessions"))
            again = import_sessions(memory, Sessions(root / "sessions"))
            texts = [memory.zoom(i, 1)[0].split("|", 1)[1] for i in range(memory.status()["messages"])]
        store = Store(root / "chat", now=lambda: CLOCK)
        store.close()
        return texts == [flatten(n) for n in notes] and done.added == len(notes) and again.added == 0 and again.known == done.added + done.known and {m.kind for m in store.messages} == {Kind.NOTE}


@law(
    "store_import_once",
    "memory rule 5",
    "Earlier sessions come in as note messages, oldest first, each entry once (a fork's shared entries once, thoughts never); a second import adds nothing.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 5 and the test sessions_import_oldest_first_without_repeated_pastes",
)
def store_import_once() -> Evidence:
    return bounded(["one", "fork", "older", "all"], _imports, label="one session; a fork of it; an older session; all three")


# -- the scan's and the fold's edges, and what the store cannot write (rules 1, 2, 6, 12, 13, D1) ---

# Stores no crash leaves, and two that a crash does leave, each written line by line by the law
# (spec.oracles.chat_store: rule 1's fields), with what the reopening must do. The judge, derived
# from memory.md rule 6 (append only, one write and one fsync per line: a crash loses at most the
# line it cut), rules 11-13 (a message of at most 512 bytes is its own node, logged right after it;
# a node is built once both halves are, logged as built, children first; two short lines make
# their free parent, joined by a newline, with no model call) and D1 (merge lines name built
# nodes; view.json is replaced after the lines it shows are logged, so it shows a view this log
# had): lines lost from a log are refused, naming the file and the line that shows the loss, and
# the refusal writes nothing; a crash's cut is completed. Each case states its expectation here,
# from those rules alone:
#   (message day file's lines, tree/ day file's lines or None for no file, view.json or None,
#    the refusal (LostLines: its path and line; FoldError: "file: line n" in its message, each
#    place given; and what its message says was lost: message lines, tree lines, a merge line)
#    or the tree lines the reopening must append, in order).

_DAY = "2026-11-30.jsonl"
_TREE_DAY = f"tree/{_DAY}"
_LONG = [O.message_line(i, "user", "x" * 600, CLOCK) for i in range(6)]  # over 512 bytes: a model's line is its node
_SHORT = [O.message_line(i, "user", "abc"[i], CLOCK) for i in range(3)]  # each its own node (rule 12)
_LEAVES = [O.node_line(0, i, f"s{i}") for i in range(6)]  # the model's lines of the long messages
# two batches: at t=4 merging (1, 0), at t=6 merging (2, 0) over it (views only append and merge)
_TWO_BATCHES = [
    *_LEAVES[:4], O.node_line(1, 0, "s0\ns1"), O.merge_line([(1, 0)], False, 4),
    *_LEAVES[4:], O.node_line(1, 1, "s2\ns3"), O.node_line(2, 0, "s0-3"), O.merge_line([(2, 0)], False, 6),
]

Refusal = tuple[type[StoreError], tuple[tuple[str, int], ...], str]
_DAMAGED: dict[str, tuple[list[bytes], list[bytes] | None, bytes | None, Refusal | list[bytes]]] = {
    # rule 12: message 0 is short and not the last, yet tree/ has no file at all
    "a short message's node line lost, no tree/ file": (_SHORT, None, None, (LostLines, ((_DAY, 1),), "tree lines")),
    # rule 12: message 1 is short and not the last; its node line is missing between logged ones
    "a short message's node line lost, not the last": (_SHORT, [O.node_line(0, 0, "a"), O.node_line(0, 2, "c")], None, (LostLines, ((_DAY, 2),), "tree lines")),
    # a crash between message 1's line and its node's: the reopening logs (0, 1), then their free
    # parent (1, 0) = "a\nb", children first (rules 12, 13)
    "the last short message's node line cut, and its free parent": (_SHORT[:2], [O.node_line(0, 0, "a")], None, [O.node_line(0, 1, "b"), O.node_line(1, 0, "a\nb")]),
    # rules 11, 13: (1, 0) on line 2 before its half (0, 1) on line 3, or with no (0, 1) at all
    "a node logged before its half": (_LONG[:4], [_LEAVES[0], O.node_line(1, 0, "s01"), _LEAVES[1]], None, (LostLines, ((_TREE_DAY, 2),), "tree lines")),
    "a node logged without its half": (_LONG[:4], [_LEAVES[0], O.node_line(1, 0, "s01"), *_LEAVES[2:4]], None, (LostLines, ((_TREE_DAY, 2),), "tree lines")),
    # D1: a batch merges built nodes, logged before its merge line; merge line 1 (tree/ line 7, at
    # t=4) names (1, 1) and merge line 2 (line 8, at t=6) names (1, 0), neither logged: the first
    # merge line naming a node no line logs is the one named
    "merge lines naming nodes no line logs": (_LONG, [*_LEAVES, O.merge_line([(1, 1)], True, 4), O.merge_line([(1, 0)], True, 6)], None, (LostLines, ((_TREE_DAY, 7),), "tree lines")),
    # rule 6: message 2's line is cut short (the log holds 2 messages), yet tree/ line 3 logs its
    # node (0, 2): a node line follows its message, so the message log lost its end
    "a node past the cut end of the message log": (_LONG[:2] + [_LONG[2][:40]], _LEAVES[:3], None, (FoldError, ((_DAY, 3), (_TREE_DAY, 3)), "the message log lost its end")),
    # no message file at all, yet tree/ line 1 logs node (0, 0): message lines were lost
    "a node past an empty message log": ([], _LEAVES[:1], None, (FoldError, ((_TREE_DAY, 1),), "message lines")),
    # D1: view.json shows 5 messages, the log holds 4
    "view.json showing more messages than the log": (_LONG[:4], _LEAVES[:4], b"[[0,0],[0,1],[0,2],[0,3],[0,4]]", (LostLines, (("view.json", 1),), "message lines")),
    # D1: view.json shows the merged line (1, 0), which no node line logs
    "view.json showing a merged line no node line logs": (_LONG[:4], _LEAVES[:4], b"[[1,0],[0,2],[0,3]]", (LostLines, (("view.json", 1),), "tree lines")),
    # D1: view.json shows (1, 0), logged but merged by no merge line: the folded view has (0, 0),
    # (0, 1) there, and views only append and merge, so the merge line that made it was lost
    "view.json showing a merged line the merge lines no longer make": (_LONG[:4], _LEAVES[:4] + [O.node_line(1, 0, "s0\ns1")], b"[[1,0],[0,2],[0,3]]", (LostLines, (("view.json", 1),), "a merge line")),
    # D1: view.json shows the view after the batch of t=4 and before the one of t=6 (a crash after
    # the merge line, before view.json was replaced): a view this log had, its merged line (1, 0)
    # logged and inside the folded (2, 0); the reopening writes nothing, the view is (2, 0), (0, 4), (0, 5)
    "view.json showing an earlier view of this log": (_LONG, _TWO_BATCHES, b"[[1,0],[0,2],[0,3],[0,4],[0,5]]", []),
}


def _damaged(case: str) -> bool:
    """A store of ``_DAMAGED`` reopened as the product opens it (Store, then DurableChat.open)."""
    messages, tree_lines, view, want = _DAMAGED[case]
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        if messages:
            (folder / _DAY).write_bytes(b"".join(messages))
        if tree_lines is not None:
            (folder / "tree").mkdir()
            (folder / _TREE_DAY).write_bytes(b"".join(tree_lines))
        if view is not None:
            (folder / "view.json").write_bytes(view)
        files = [folder / _DAY, folder / _TREE_DAY, folder / "view.json"]
        before = [f.read_bytes() if f.exists() else None for f in files]
        store = Store(folder, now=lambda: CLOCK)
        try:
            durable = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
        except StoreError as error:
            store.close()
            if isinstance(want, list) or type(error) is not want[0]:
                return False
            if [f.read_bytes() if f.exists() else None for f in files] != before:
                return False  # a refusal writes nothing
            _, places, lost = want
            if lost not in str(error):
                return False
            if isinstance(error, LostLines):
                (name, line), = places
                return Path(str(error.path)) == folder / name and error.line == line
            return all(f"{folder / name}: line {line}" in str(error) for name, line in places)
        store.close()
        if not isinstance(want, list):
            return False
        written = (folder / _TREE_DAY).read_bytes().splitlines() if (folder / _TREE_DAY).exists() else []
        expected = [_json.loads(x) for x in (tree_lines or []) + want]
        view_ok = True
        if case == "view.json showing an earlier view of this log":
            view_ok = tuple(durable.chat.view.nodes) == ((2, 0), (0, 4), (0, 5)) and store.check(durable.chat.view.nodes) == "stale"
        return [_json.loads(x) for x in written] == expected and view_ok


def _shape(case: str) -> bool:
    """One log shape a crash, an old writer or a damaged disk leaves, read as the seed says: a
    torn tail skipped (then terminated by the next append), any other bad line or impossible
    node an error naming it, and nothing read that was not written."""
    if case in _DAMAGED:
        return _damaged(case)
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where)
        tree = folder / "tree"
        tree.mkdir()
        day = "2026-11-30.jsonl"
        msgs = [Message(i, Kind.USER, f"m{i}", CLOCK) for i in range(4)]
        if case in ("only a torn message", "only a torn node line"):
            # rule 6: a newest file whose one line a crash cut holds no record; the next append
            # terminates it and reads back after it
            is_tree = case == "only a torn node line"
            whole = encode(NodeLine((0, 0), "n") if is_tree else msgs[0])
            (tree if is_tree else folder).joinpath(day).write_bytes(whole[:-3])
            log = TreeLog(tree, 4) if is_tree else MessageLog(folder)
            log.close()
            if len(log) != 0 or log.tail.torn != 1 or log.tail.terminated:
                return False
            appender = daylog.Appender(tree if is_tree else folder, log.tail, lambda: "2026-11-30")
            appender.append(NodeLine((0, 0), "n") if is_tree else msgs[0])
            appender.close()
            again = TreeLog(tree, 4) if is_tree else MessageLog(folder)
            again.close()
            return list(again) == [NodeLine((0, 0), "n") if is_tree else msgs[0]]
        (folder / day).write_bytes(b"".join(encode(m) for m in msgs))
        if case == "a text that is not UTF-8":
            # a line framed as the store writes it but whose text bytes no writer makes: an
            # error naming its place when the text is read, never a wrong text
            (folder / day).write_bytes(encode(msgs[0]) + b'{"i":1,"kind":"user","text":"\xff\xfe","size":2,"date":"' + CLOCK.encode() + b'"}\n')
            log = MessageLog(folder)
            try:
                log.text(1)
                return False
            except CorruptLine as error:
                return str(folder / day) in str(error) and log.text(0) == "m0"
            finally:
                log.close()
        if case == "a log read as a sequence":
            log = MessageLog(folder)
            nodes = TreeLog(tree, 4)
            try:
                unlogged = False
                try:
                    nodes.text((1, 0))
                except StoreError:
                    unlogged = True
                return bool(log[1:3] == msgs[1:3] and log == msgs and log == tuple(msgs) and log != msgs[:2] and (log == 5) is False and unlogged)
            finally:
                log.close()
                nodes.close()
        lines: dict[str, list[Record]] = {
            "two nodes past the chat": [NodeLine((0, 0), "a"), NodeLine((0, 9), "a"), NodeLine((0, 7), "a")],
            "a node past the chat after one logged twice": [NodeLine((0, 0), "a"), NodeLine((0, 0), "a"), NodeLine((3, 1), "a")],
            "a merge of a number no node has": [MergeLine(((1, 2**70),), True, 2)],
            "a merge inside an earlier one, later": [MergeLine(((2, 0),), True, 4)],
        }
        if case == "a free parent a crash cut":
            # rule 12: two short lines make their parent with no model call; a crash after the
            # halves' node lines and before the parent's: the reopening builds and logs it
            short = [Message(i, Kind.USER, "ab"[i], CLOCK) for i in range(2)]
            (folder / day).write_bytes(b"".join(encode(m) for m in short))
            (tree / day).write_bytes(encode(NodeLine((0, 0), "a")) + encode(NodeLine((0, 1), "b")))
            store = Store(folder, now=lambda: CLOCK)
            chat = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
            store.close()
            again = TreeLog(tree, 2)
            again.close()
            return chat.chat.text((1, 0)) == "a\nb" and NodeLine((1, 0), "a\nb") in list(again)
        if case == "a parent logged before its half, read from lines":
            # lines (not a store's files: those are refused, "a node logged without its half")
            # logging (1, 0) with no line for its half (0, 1), message 1 "b" the last: the
            # reopening either refuses them or logs message 1's node (rule 12) and never builds
            # (1, 0) again (rule 13: each node built once, never rebuilt)
            sink = Lines()
            short = [Message(i, Kind.USER, "ab"[i], CLOCK) for i in range(2)]
            try:
                DurableChat.open(_prod_config(SMALL), short, [NodeLine((0, 0), "a"), NodeLine((1, 0), "a\nb")], sink, lambda: CLOCK)
            except StoreError:
                return not sink.lines
            return [(where_, _json.loads(data)) for where_, data in sink.lines] == [("tree", _json.loads(O.node_line(0, 1, "b")))]
        if case == "a node logged twice, read from lines":
            try:
                DurableChat.open(_prod_config(SMALL), msgs, [NodeLine((0, 0), "a"), NodeLine((0, 0), "a")], _Discard(), lambda: CLOCK)
            except FoldError as error:
                return "(0, 0)" in str(error)
            return False
        if case == "a merge inside an earlier one, later":
            more = [Message(i, Kind.USER, "x" * 600, CLOCK) for i in range(6)]
            (folder / day).write_bytes(b"".join(encode(m) for m in more))
            lines[case].append(MergeLine(((1, 0),), True, 6))
        (tree / day).write_bytes(b"".join(encode(r) for r in lines[case]))
        try:
            store = Store(folder, now=lambda: CLOCK)
            try:
                DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
            finally:
                store.close()
        except FoldError as error:
            named = {"two nodes past the chat": "(0, 9)", "a node past the chat after one logged twice": "(0, 0)", "a merge of a number no node has": "line 1"}
            return named.get(case, "inside") in str(error)
        return False


class _Discard:
    """A sink that keeps nothing (the fold's refusal comes before any write)."""

    def message(self, record: Message) -> None: ...
    def node(self, record: NodeLine) -> None: ...
    def merge(self, record: MergeLine) -> None: ...
    def view(self, nodes: Any) -> None: ...


_SHAPES = [
    "only a torn message",
    "only a torn node line",
    "a text that is not UTF-8",
    "a log read as a sequence",
    "two nodes past the chat",
    "a node past the chat after one logged twice",
    "a merge of a number no node has",
    "a merge inside an earlier one, later",
    "a free parent a crash cut",
    "a node logged twice, read from lines",
    "a parent logged before its half, read from lines",
    *_DAMAGED,
]


@law(
    "store_reads_every_log_shape",
    "memory rules 1, 2, 6, 12, 13, D1",
    "A newest day file holding only a torn line reads as empty and is terminated by the next append; a text no writer makes, "
    "a node past the chat or logged twice, a merge of no node or inside an earlier one is an error naming it; lines lost (a short "
    "message's node, a node's half, a merged node, the message log's end, what view.json shows) are refused naming file and line, "
    "writing nothing; the last short message's node and a free parent a crash cut are built again, never a logged node.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 6 (append only, flush each write), rules 11-13 (short messages are nodes, free parents, built once), "
    "D1 (the fold; view.json saved after the lines it shows)",
)
def store_reads_every_log_shape() -> Evidence:
    return bounded(_SHAPES, _shape, label="log shapes: " + ", ".join(_SHAPES))


def _unwritable(case: str) -> bool:
    """What the store cannot write is a StoreError naming it (rule 6: nothing is lost silently)."""
    from eukhe.memory.store import VIEW_FILE, chat_dir

    with tempfile.TemporaryDirectory() as where:
        root = Path(where)
        if case == "the default chat":
            return chat_dir(root) == root / "chat" / "main"  # memory.md Use: ~/.eukhe/chat/
        if case == "a chat directory under a file":
            (root / "file").write_text("x")
            try:
                Store(root / "file" / "chat", now=lambda: CLOCK)
            except StoreError as error:
                return "file" in str(error)
            return False
        store = Store(root / "chat", now=lambda: CLOCK)
        try:
            chat = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
            chat.message("hello")
            if case == "a view.json that cannot be replaced":
                (root / "chat" / f".{VIEW_FILE}.{os.getpid()}").mkdir()
                try:
                    chat.message("again")
                except StoreError as error:
                    return VIEW_FILE in str(error) and list(Store(root / "chat", now=lambda: CLOCK).messages)[-1].text == "again"
                return False
            if case == "an image name too long":
                try:
                    store.save_image(0, "x" * 300 + ".png", b"png")
                except StoreError as error:
                    return "image" in str(error)
                return False
            try:
                chat.date(chat.chat.t)  # a date past the chat
            except IndexError:
                return chat.date(0) == CLOCK
            return False
        finally:
            store.close()


_UNWRITABLE = ["the default chat", "a chat directory under a file", "a view.json that cannot be replaced", "an image name too long", "a date past the chat"]


@law(
    "store_says_what_it_cannot_write",
    "memory rules 1, 6, 17, 53",
    "A chat directory that cannot be made, a view.json that cannot be replaced, an image that cannot be kept is a StoreError "
    "naming it, the message already logged kept; a date is given for messages of the chat only.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 6 (flush every write; DESIGN: nothing is lost, typed errors), rule 17 (date(id)), rule 53 (images)",
)
def store_says_what_it_cannot_write() -> Evidence:
    return bounded(_UNWRITABLE, _unwritable, label="cases: " + ", ".join(_UNWRITABLE))


def _answers(memory: Memory) -> list[threading.Thread]:
    """The owner's threads answering connections (each ends when its client's connection does)."""
    return [t for t in threading.enumerate() if getattr(t, "_target", None) == memory._answer]


def _owner_edge(case: str) -> bool:
    """The owner's socket at its edges (rule 7): an image call without a name; an owner whose
    chat closed answers nothing, so its client sees the end; a client gone before its reply
    leaves the owner serving; an owner whose socket was removed closes and the chat is claimed
    again; a lock path the owner cannot take fails the claim and releases the chat. Threads are
    joined, never slept on."""
    from eukhe.memory import owner as owner_module

    with tempfile.TemporaryDirectory() as where:
        folder = Path(where) / "chat"
        if case == "a lock path that is no socket":
            (folder / owner_module.LOCK).mkdir(parents=True)
            (folder / owner_module.LOCK / "x").write_text("not a socket")
            for _ in range(2):  # the second claim finds the chat released, not busy
                try:
                    Memory(folder)
                    return False
                except OSError as error:
                    if isinstance(error, owner_module.MemoryBusy):
                        return False
            return True
        memory = Memory(folder)
        try:
            if case == "an image without a name":
                try:
                    memory._call({"op": "image", "id": 0, "name": 5, "data": ""})
                    return False
                except ValueError:
                    pass
                memory.append("m")
                try:
                    memory._call({"op": "image", "id": 0, "name": 5, "data": ""})
                except ValueError as error:
                    return "name" in str(error)
                return False
            if case == "a socket removed under its owner":
                os.unlink(folder / owner_module.LOCK)
                memory.close()
                with Memory(folder) as again:
                    return again.is_owner
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
                raw.connect(str(folder / owner_module.LOCK))
                raw.sendall(b'{"op": "status"}\n')
                if b"ok" not in raw.recv(4096):  # one round trip: the owner's thread for this client runs
                    return False
                core = memory.core
                assert core is not None
                if case == "an owner whose chat closed":
                    core.close()  # the chat closes while a client is connected
                    if core.call({"op": "status"}) is not None:
                        return False
                    raw.sendall(b'{"op": "status"}\n')
                    ended = raw.recv(64) == b""  # no reply: the client sees the end and claims again
                    for thread in _answers(memory):
                        thread.join(5)
                    memory.core = None
                    return ended
                # a client gone before its reply: the owner's reply finds no reader
                with core.lock:  # the owner answers only after the client has gone
                    raw.sendall(b'{"op": "status"}\n')
                    raw.shutdown(socket.SHUT_RDWR)
                    raw.close()
                for thread in _answers(memory):
                    thread.join(5)
                return memory.append("still served") == [0] and memory.status()["messages"] == 1
        finally:
            memory.close()


_OWNER_EDGES = ["an image without a name", "an owner whose chat closed", "a client gone before its reply", "a socket removed under its owner", "a lock path that is no socket"]


@law(
    "store_owner_edges",
    "memory rule 7, §7.12",
    "The owner's lock socket at its edges: a bad call is refused; a closed chat answers nothing and its client sees the end; "
    "a client gone before its reply leaves the owner serving; a removed socket closes cleanly; a claim that cannot serve releases the chat.",
    BOUNDED,
    area="optchat",
    derivation="memory.md rule 7 (one process owns a chat, holding a lock) and the tests a_second_handle_is_a_client_and_takes_over, a_stale_socket_is_taken_over",
)
def store_owner_edges() -> Evidence:
    return bounded(_OWNER_EDGES, _owner_edge, label="edges: " + ", ".join(_OWNER_EDGES))


# -- the index beside the logs (issue 11 item 9: the start of a big chat) ---------------------------
# Derived: the seed has no index (a start reads the logs, rule 25); an index may only make the start
# faster. Judged by the start of the same files without it (the full scan the laws above hold to the
# seed's fields, markers and errors).

import eukhe.memory.store as _store_module  # noqa: E402
from eukhe.memory.store import INDEX_FILE  # noqa: E402


def _started(folder: Path) -> tuple[str, object]:
    try:
        store = Store(folder, now=lambda: CLOCK)
        durable = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
    except StoreError as error:
        return "error", f"{type(error).__name__}: {error}".replace(str(folder), "<chat>")
    seen = (list(store.messages), store.messages.keys, list(store.tree), store.tree.rows, store.tree.merges, tuple(durable.chat.view.nodes), tuple(durable.chat.view.sizes), durable.chat.open)
    found = store.index
    store.close()
    return found, seen


_INDEX_EDITS = ("none", "appended", "flipped", "truncated", "empty", "rewritten", "tree cut", "marker", "torn", "torn, then a message",
                "temporary left", "index in the way")


def _index_case(case: tuple[str, int]) -> bool:
    edit, at = case
    with tempfile.TemporaryDirectory() as where:
        folder = Path(where) / "chat"
        before, _store_module.INDEX_GROWTH = _store_module.INDEX_GROWTH, 1  # every start that read new lines indexes them
        try:
            for part in range(2):
                store = Store(folder, now=lambda: CLOCK)
                durable = DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK)
                for n in range(8):
                    durable.message(filler(f"m{part}.{n}", 60 if n % 3 else 400), key=f"k{part}.{n}" if n == 5 else None)
                    while durable.chat.running and n % 2:
                        durable.done(0, filler("line", 90))
                store.close()
            index_file = folder / INDEX_FILE
            left = folder / f".{INDEX_FILE}.tmp"  # the index's temporary file (written, then renamed over it)
            if edit == "temporary left":  # a crash left it, other bytes and other bits: removed, never reused
                left.write_bytes(b"left by a crash")
                left.chmod(0o644)
            elif edit == "index in the way":  # a directory where the index goes: the rename fails, the start does not
                index_file.unlink()
                (index_file / "kept").mkdir(parents=True)
            Store(folder, now=lambda: CLOCK).close()  # indexes every line
            if left.exists() or (edit == "index in the way") != index_file.is_dir():
                return False  # a temporary file stayed behind, or the directory in the way was replaced
            if edit == "temporary left" and stat.S_IMODE(index_file.stat().st_mode) != 0o600:
                return False  # the index is private like the logs, created so (DESIGN.md: private by default)
            day, tree = folder / "2026-11-30.jsonl", folder / "tree" / "2026-11-30.jsonl"
            data = b"" if edit == "index in the way" else index_file.read_bytes()
            lines = day.read_bytes().splitlines(keepends=True)
            if edit == "appended":
                with open(day, "ab") as out:
                    out.write(encode(Message(len(lines), Kind.USER, "after", CLOCK)))
            elif edit == "flipped":
                k = at * 7919 % len(data)
                index_file.write_bytes(data[:k] + bytes([data[k] ^ 1 << at % 8]) + data[k + 1 :])
            elif edit == "truncated":
                index_file.write_bytes(data[: at * len(data) // 8])
            elif edit == "empty":
                index_file.write_bytes(b"")
            elif edit == "rewritten":
                k = at % len(lines)
                lines[k] = lines[k].replace(b"m", b"M", 1)
                day.write_bytes(b"".join(lines))
            elif edit == "tree cut":
                tree.write_bytes(tree.read_bytes()[: -1 - at])
            elif edit == "marker":
                with open(day, "ab") as out:
                    out.write(encode(Torn(len(lines) - at % 3)))
            elif edit.startswith("torn"):
                with open(day, "ab") as out:
                    out.write(encode(Message(len(lines), Kind.USER, "cut", CLOCK))[: 5 + at])
                if edit == "torn, then a message":  # a start from the index terminates the tail and appends
                    store = Store(folder, now=lambda: CLOCK)
                    DurableChat.open(_prod_config(SMALL), store.messages, store.tree, store, lambda: CLOCK).message("after the cut")
                    store.close()
            copy = Path(where) / "plain"  # the same files without the index (a start may write lines)
            shutil.copytree(folder, copy)
            if (copy / INDEX_FILE).is_dir():
                shutil.rmtree(copy / INDEX_FILE)
            (copy / INDEX_FILE).unlink(missing_ok=True)
            found, seen = _started(folder)
            if left.exists():
                return False
            plain, expected = _started(copy)
        finally:
            _store_module.INDEX_GROWTH = before
        trusted = {"none": "used", "temporary left": "used", "appended": "used", "torn": "used", "flipped": "unreadable", "truncated": "unreadable", "empty": "unreadable", "rewritten": "stale"}
        whole = edit != "torn, then a message" or (isinstance(expected, tuple) and expected[0][-1].text == "after the cut")
        return whole and seen == expected and plain in ("missing", "error") and (found == trusted[edit] if edit in trusted and found != "error" else True)


@law(
    "store_index_is_a_cache",
    "memory rule 25 (derived: issue 11 item 9)",
    "A start with the index beside the logs reads the same messages, keys, tree lines, built sizes, merges and view as a start without it; "
    "a torn or tampered index, or day files changed under it, is scanned past with the same result (or the same error).",
    BOUNDED,
    area="optchat",
    derivation="derived: the seed has no index; judged by the start of the same files with the index deleted",
)
def store_index_is_a_cache() -> Evidence:
    cases = [(edit, at) for edit in _INDEX_EDITS for at in range(1, 4 if edit in ("none", "empty", "appended", "temporary left", "index in the way") else 7)]
    return bounded(cases, _index_case, label="a chat of two starts of 8 messages; its index kept, appended past, flipped, cut, emptied; a message rewritten, the tree cut, a torn marker or tail appended, a tail terminated by a start from the index; "
                   "a temporary file a crash left (removed, the index made 0600), a directory where the index goes (no temporary left)")
