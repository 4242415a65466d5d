"""The planner core in each form it ships (pure Python, and compiled with mypyc when built):
a differential test of the fast path against the model (bend.optchat: its fit, batch and
compaction rules) on random histories, the issue-16 stream against the model's fit, and the
optchat bridge's committed scenarios replayed byte for byte on each form."""

from __future__ import annotations

import hashlib
import importlib
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from bend.optchat.view import PLACEHOLDER_BYTES, View, view_bytes
from bridge import core as bridges
from bridge.optchat import BRIDGE
from eukhe.memory import PLACEHOLDER_BYTES as P_BYTES
from eukhe.memory import core as pure
from eukhe.memory import view as V
from spec.laws.optchat import CoreModel, core_h_stream, model_h_stream

Node = tuple[int, int]
FORMS = ["pure", "compiled"]


@pytest.fixture(params=FORMS)
def form(request: pytest.FixtureRequest) -> Iterator[str]:
    name = str(request.param)
    if name == "compiled":
        if os.environ.get("EUKHE_BREAK"):
            pytest.skip("a break patches the pure source; the compiled form is built from the unpatched one")
        if V.compiled() is None:
            pytest.skip("the compiled core is not built: python -m eukhe.corebuild (make does it)")
    before = V.use(name)
    try:
        yield name
    finally:
        V.CORE = before


def test_a_compiled_core_built_from_the_current_source_is_the_one_found() -> None:
    try:
        built = importlib.import_module(V.COMPILED)
    except ImportError:
        pytest.skip("the compiled core is not built: python -m eukhe.corebuild (make does it)")
    if getattr(built, "SOURCE", None) != hashlib.sha256(Path(pure.__file__).read_bytes()).hexdigest():
        pytest.skip("the compiled core was built from an older source: python -m eukhe.corebuild")
    assert V.compiled() is built


def test_the_core_counts_the_placeholder_as_the_seed_does() -> None:
    assert pure.PLACEHOLDER == P_BYTES == PLACEHOLDER_BYTES


def _lines(view: View) -> list[tuple[Node, int]]:
    return [(node, length) for node, length in view]


def _core_lines(codes: list[int], sizes: list[int]) -> list[tuple[Node, int]]:
    return [((code & 63, code >> 6), length) for code, length in zip(codes, sizes)]


def _history(seed: int, word: int = 63) -> None:
    r = random.Random(seed)
    ceiling = r.randint(300, 6_000)
    floor = r.randint(0, ceiling)
    cceiling = r.randint(100, 3_000)
    cfloor = r.randint(0, cceiling)
    model = CoreModel((ceiling, floor, cceiling, cfloor))
    core = V.planner(ceiling, floor, cceiling, cfloor)
    core.scratch.word = word
    built: dict[Node, int] = {}
    waiting: list[Node] = []  # unbuilt message nodes and ready parents
    late = r.random() * 0.6
    cmerges = {"-": 0, "view": 1, "ceiling": 2}

    def ready(node: Node) -> None:
        level, i = node
        if (level, i ^ 1) in built:
            waiting.append((level + 1, i >> 1))

    def build(node: Node, length: int) -> None:
        built[node] = length
        model.build(node, length)
        core.build(node[0], node[1], length)
        ready(node)

    for _ in range(r.randint(50, 700)):
        while waiting and r.random() < 0.7:
            node = waiting.pop(r.randrange(len(waiting)) if r.random() < 0.5 else 0)
            build(node, r.randint(1, 512))
        t = core.t
        now = r.random() >= late
        length = r.randint(1, 512) if now else 0
        model.message(length)
        core.add(length)
        if now:
            built[(0, t)] = length
            ready((0, t))
        else:
            waiting.append((0, t))
        core.step()
        chat = model.chat
        where = f"seed {seed}, T={core.t}"
        assert _core_lines(core.codes, core.sizes) == _lines(chat.view), where
        assert core.total == view_bytes(chat.view), where
        assert _core_lines(core.ccodes, core.csizes) == _lines(chat.cview), where
        assert core.ctotal == view_bytes(chat.cview), where
        assert (core.open, core.batch, core.cmerge) == (chat.open, chat.batch, cmerges[chat.cmerge]), where


@pytest.mark.parametrize("seed", range(40))
def test_optchat_core_agrees_with_the_model_on_random_histories(form: str, seed: int) -> None:
    """Messages built at once or late, parents built late or in any order, tiny budgets (many
    batches, short batches, F1, compaction views merged again and past their ceiling)."""
    _history(seed)


@pytest.mark.parametrize("word", [0, 14])
@pytest.mark.parametrize("seed", range(40))
def test_optchat_core_wide_heap_agrees_with_the_model(form: str, seed: int, word: int) -> None:
    """The fit's wide heap (a key with no room for a position beside it: chats far past 10^8
    messages) on short chats, its entries allowed ``word`` bits: none (every fit goes wide) or
    14 (over these 40 histories, 2,479 fits pack and 4,376 go wide: the two alternate)."""
    _history(seed, word)


@pytest.mark.parametrize("budgets", [(12_800, 6_400, 3_200, 1_600), (4_000, 3_900, 1_000, 100), (128_000, 64_000, 32_000, 16_000)])
def test_optchat_core_h_stream_agrees_with_the_model(form: str, budgets: tuple[int, int, int, int]) -> None:
    count = 3_000 if budgets[0] < 100_000 else 1_200
    core = V.CORE
    planner = core.Planner(*budgets)
    assert core_h_stream(planner, count) == model_h_stream(count, budgets)
    main = core.Planner(budgets[0], budgets[1], -1, 0)
    assert core_h_stream(main, count) == model_h_stream(count, budgets)


def test_optchat_bridge_on_each_core_form(form: str) -> None:
    """The optchat bridge's committed scenarios: production's transcript on this form of the
    core has the committed digest (the model's), byte for byte."""
    digests = bridges.read_digests(BRIDGE.directory)
    files = sorted(BRIDGE.directory.glob("*.jsonl"))
    assert len(files) == BRIDGE.count
    wrong = [p.name for p in files if bridges.digest(BRIDGE.production(bridges.read(p))) != digests[p.name]]
    assert not wrong, f"{form}: production transcripts differ from the committed digests: {wrong}"
