"""The director bridge (S5 tie): decide, Loop.tick, run and the persisted eukhe.directors value
of impl/eukhe/directors against bend/director.py, on 300 generated scenarios (stacks, verdict
lists per step, caps, global budgets), transcript against transcript, byte for byte.

The production printer drives eukhe.directors only (it never imports bend). The generator
aims a share of its events at each rule case the seed names, and ``reached`` recomputes,
with the production code, which cases a scenario reaches.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from bend.director import transcript as model_transcript
from bridge.core import Bridge, Event
from eukhe.directors.document import DocumentError, canonical, from_document, to_document
from eukhe.directors.hooks import DirectorLimits, LimitsError
from spec.oracles import director as shapes
from eukhe.directors.stack import (
    DEFAULT_STACK_CAP,
    KIND_ORDER,
    Decision,
    Layer,
    Loop,
    Tag,
    Verdict,
    decide,
    full_cap,
)

KIND_NAMES = [kind.value for kind in KIND_ORDER]

CASES = frozenset(
    {
        "push_room",
        "push_below_only",
        "full_stack",
        "push_refused_after_leave",
        "push_refused_after_defer",
        "no_budget",
        "leave",
        "all_defer",
        "empty_stack",
        "again",
        "yield",
        "abort",
        "no_step",
        "tick_after_end",
        "run",
        "encode",
        "decode_sound",
        "decode_unsound",
        "limits_ok",
        "limits_refused",
    }
    | {f"malformed {where}" for where in ("top", "version", "layers", "layer key", "budget", "kind", "data")}
)


# -- parsing scenario values into production values ---------------------------------------------


def layer_of(value: Any) -> Layer:
    kind, budget = value
    return Layer(KIND_ORDER[int(kind)], int(budget))


def stack_of(value: Any) -> list[Layer]:
    return [layer_of(item) for item in value]


def verdict_of(value: Any) -> Verdict:
    if isinstance(value, list):
        return Verdict(Tag.STACK, layer_of(value[1:]))
    return Verdict(Tag(value))


def verdicts_of(value: Any) -> list[Verdict]:
    return [verdict_of(item) for item in value]


# -- the production printer -----------------------------------------------------------------------


def show_stack(stack: Sequence[Layer]) -> str:
    return "[" + ",".join(f"{layer.kind.value}:{layer.budget}" for layer in stack) + "]"


def show_loop(loop: Loop) -> str:
    return f"stack={show_stack(loop.stack)} steps={loop.steps} end={loop.end or '-'}"


def production(events: Sequence[Event]) -> list[str]:
    lines: list[str] = []
    loop = Loop([], 0)
    cap = full_cap(DEFAULT_STACK_CAP)
    for number, event in enumerate(events):
        op = event["op"]
        if op == "decide":
            decision = decide(stack_of(event["stack"]), verdicts_of(event["verdicts"]), int(event["cap"]))
            lines.append(
                f"{number} decide stack={show_stack(decision.stack)} outcome={decision.outcome.value} rule={decision.rule}"
            )
        elif op == "loop":
            loop = Loop(stack_of(event["stack"]), int(event["steps"]))
            cap = int(event["cap"])
            lines.append(f"{number} loop {show_loop(loop)} cap={cap}")
        elif op == "tick":
            rule = loop.tick(verdicts_of(event["verdicts"]), cap)
            lines.append(f"{number} tick {show_loop(loop)} rule={rule}")
        elif op == "run":
            rules = [loop.tick(verdicts_of(item), cap) for item in event["script"]]
            lines.append(f"{number} run ticks={len(rules)} rules={','.join(rules)} {show_loop(loop)}")
        elif op == "encode":
            lines.append(f"{number} encode {canonical(to_document(loop.stack))}")
        elif op == "limits":
            try:
                DirectorLimits(*event["values"])
                said = "ok"
            except LimitsError:
                said = "refused"
            lines.append(f"{number} limits {said}")
        elif op == "decode":
            try:
                decoded = from_document(event["doc"])
            except DocumentError:
                lines.append(f"{number} decode unsound")
            else:
                loop.stack = decoded
                lines.append(f"{number} decode stack={show_stack(decoded)}")
        else:
            raise ValueError(f"event {number}: unknown op {op!r}")
    return lines


# -- coverage --------------------------------------------------------------------------------------


def classify(stack: list[Layer], decision: Decision, cap: int) -> set[str]:
    found: set[str] = set()
    tags = [v.tag for v in decision.verdicts]
    if Tag.LEAVE in tags:
        found.add("leave")
    rule = decision.rule
    if rule in {"again", "yield", "abort"}:
        found.add(rule)
    if rule == "push":
        found.add("push_room")
    if rule in {"again_no_budget", "push_no_budget"}:
        found.add("no_budget")
    if rule == "none":
        found.add("all_defer" if stack else "empty_stack")
    if rule == "push_no_room" and decision.decider is not None:
        n = len(stack)
        if decision.decider + 1 < cap:
            found.add("push_below_only")
        else:
            found.add("full_stack")
        left = tags.count(Tag.LEAVE)
        deferred = tags.count(Tag.DEFER)
        if left and n - left < cap:
            found.add("push_refused_after_leave")
        if deferred and n - deferred < cap:
            found.add("push_refused_after_defer")
    return found


def reached(events: Sequence[Event]) -> set[str]:
    found: set[str] = set()
    loop = Loop([], 0)
    cap = full_cap(DEFAULT_STACK_CAP)

    def ticked(verdicts: list[Verdict]) -> None:
        before = list(loop.stack)
        n = len(before)

        def by_list(index: int, layer: Layer) -> Verdict:
            k = n - 1 - index
            return verdicts[k] if k < len(verdicts) else Verdict(Tag.DEFER)

        rule, decision = loop.tick_with(by_list, cap)
        if rule == "ended":
            found.add("tick_after_end")
        elif rule == "no_step":
            found.add("no_step")
        if decision is not None:
            found.update(classify(before, decision, cap))

    for event in events:
        op = event["op"]
        if op == "decide":
            stack = stack_of(event["stack"])
            found.update(classify(stack, decide(stack, verdicts_of(event["verdicts"]), int(event["cap"])), int(event["cap"])))
        elif op == "loop":
            loop = Loop(stack_of(event["stack"]), int(event["steps"]))
            cap = int(event["cap"])
        elif op == "tick":
            ticked(verdicts_of(event["verdicts"]))
        elif op == "run":
            found.add("run")
            for item in event["script"]:
                ticked(verdicts_of(item))
        elif op == "encode":
            found.add("encode")
        elif op == "limits":
            try:
                DirectorLimits(*event["values"])
                found.add("limits_ok")
            except LimitsError:
                found.add("limits_refused")
        elif op == "decode":
            if "flaw" in event:
                found.add(f"malformed {event['flaw']}")
            try:
                loop.stack = from_document(event["doc"])
                found.add("decode_sound")
            except DocumentError:
                found.add("decode_unsound")
    return found


# -- the generator --------------------------------------------------------------------------------


def random_layer(rng: random.Random, budget_max: int = 3) -> list[int]:
    return [rng.randrange(4), rng.randint(0, budget_max)]


def random_verdict(rng: random.Random) -> Any:
    tag = rng.choices(["defer", "again", "leave", "yield", "abort", "stack"], weights=[4, 4, 3, 1, 1, 3])[0]
    if tag == "stack":
        return ["stack", rng.choice([2, 3]), rng.randint(0, 2)]
    return tag


def random_verdicts(rng: random.Random, size: int) -> list[Any]:
    return [random_verdict(rng) for _ in range(rng.randint(0, size + 1))]


def aimed_decide(rng: random.Random, aim: str) -> Event:
    """A decide event aimed at one rule case (the coverage check still recomputes it)."""
    cap = rng.randint(1, 10)
    if aim == "random":
        size = rng.randint(0, cap + 1)
        stack = [random_layer(rng) for _ in range(size)]
        return {"op": "decide", "stack": stack, "verdicts": random_verdicts(rng, size), "cap": cap}
    if aim == "push_room":
        size = rng.randint(0, cap - 1)
        stack = [random_layer(rng) for _ in range(size)] + [[rng.randrange(4), rng.randint(1, 3)]]
        return {"op": "decide", "stack": stack, "verdicts": [["stack", 2, 1]], "cap": cap}
    if aim in {"push_below_only", "after_leave", "after_defer"}:
        cap = rng.randint(2, 9)
        size = cap + rng.randint(0, 1)
        position = rng.randint(0, cap - 2)  # the layer and those below fit the cap
        stack = [random_layer(rng) for _ in range(size)]
        stack[position] = [rng.randrange(4), rng.randint(1, 3)]
        above = size - 1 - position
        if aim == "after_leave":
            passes = ["leave"] * above
        elif aim == "after_defer":
            passes = ["defer"] * above
        else:
            passes = [rng.choice(["defer", "leave"]) for _ in range(above)]
        return {"op": "decide", "stack": stack, "verdicts": passes + [["stack", 3, rng.randint(0, 2)]], "cap": cap}
    if aim == "full_stack":
        stack = [random_layer(rng) for _ in range(cap - 1)] + [[rng.randrange(4), rng.randint(1, 3)]]
        return {"op": "decide", "stack": stack, "verdicts": [["stack", 2, 1]], "cap": cap}
    if aim == "no_budget":
        size = rng.randint(1, cap)
        stack = [random_layer(rng) for _ in range(size)]
        stack[-1] = [rng.randrange(4), 0]
        return {"op": "decide", "stack": stack, "verdicts": [rng.choice(["again", ["stack", 2, 1]])], "cap": cap}
    # all_defer
    size = rng.randint(0, cap)
    stack = [random_layer(rng) for _ in range(size)]
    return {"op": "decide", "stack": stack, "verdicts": [rng.choice(["defer", "leave"]) for _ in range(size)], "cap": cap}


AIMS = ["random", "random", "push_room", "push_below_only", "after_leave", "after_defer", "full_stack", "no_budget", "all_defer"]


def document(rng: random.Random) -> Any:
    stack = [random_layer(rng) for _ in range(rng.randint(0, 4))]
    layers: list[dict[str, Any]] = [{"budget": b, "kind": KIND_NAMES[k]} for k, b in stack]
    # No valid kind data: the model keeps a number for the kind, not its data (S5, not modelled).
    doc: dict[str, Any] = {"layers": layers, "version": 1}
    if rng.random() < 0.45:
        flaw = rng.randrange(11)
        target = layers[0] if layers else None
        if flaw == 0 and target is not None:
            target["kind"] = "boss"
        elif flaw == 1 and target is not None:
            target["budget"] = -1
        elif flaw == 2 and target is not None:
            target["budget"] = str(target["budget"])
        elif flaw == 3 and target is not None:
            target["budget"] = True
        elif flaw == 4:
            doc["version"] = 2
        elif flaw == 5:
            del doc["version"]
        elif flaw == 6:
            doc["head"] = 0
        elif flaw == 7:
            doc["layers"] = {"0": layers}
        elif flaw == 8 and target is not None:
            target["data"] = ["text"]
        elif flaw == 9 and target is not None:
            del target["budget"]
        else:
            doc["layers"] = layers + ["goal"]
    return doc


def _flaw_class(name: str) -> str:
    where = name.split(":")[0]
    if where == "top":
        return "top"
    if where in ("version", "layers"):
        return where
    if where.endswith(".budget"):
        return "budget"
    if where.endswith(".kind"):
        return "kind"
    if where.endswith(".data"):
        return "data"
    return "layer key"


def malformed_event(rng: random.Random) -> Event:
    """A document with one flaw at some depth (spec/oracles/director.py lists them all)."""
    stack = [random_layer(rng) for _ in range(rng.randint(0, 3))]
    doc: dict[str, Any] = {"layers": [{"budget": b, "kind": KIND_NAMES[k]} for k, b in stack], "version": 1}
    if doc["layers"] and rng.random() < 0.5:
        doc["layers"][0]["data"] = rng.choice([{}, {"text": "go"}, {"tool": "bash", "tries": 1, "n": [1.5, None]}])
    name, bad = rng.choice([(n, d) for n, d in shapes.malformed(doc) if "nan" not in n and "inf" not in n])
    return {"op": "decode", "doc": bad, "flaw": _flaw_class(name)}


LIMIT_VALUES: list[Any] = [0, 1, 8, 200, 2**63 - 1, 2**63, -1, 10**27, True, None, "3", 2.5]


def generate(index: int) -> list[Event]:
    rng = random.Random(f"director-{index}")
    events: list[Event] = []
    events.append({"op": "limits", "values": [rng.choice(LIMIT_VALUES) if rng.random() < 0.3 else rng.randint(0, 9) for _ in range(4)]})
    if index % 3 == 0:
        events.append(malformed_event(rng))
    for k in range(rng.randint(2, 5)):
        events.append(aimed_decide(rng, AIMS[(index + 3 * k) % len(AIMS)]))
    cap = rng.randint(2, 10)
    stack = [random_layer(rng) for _ in range(rng.randint(0, min(cap, 4)))]
    steps = rng.randint(0, 5)
    events.append({"op": "loop", "stack": stack, "steps": steps, "cap": cap})
    for _ in range(rng.randint(1, steps + 4)):
        events.append({"op": "tick", "verdicts": random_verdicts(rng, len(stack) + 1)})
    events.append({"op": "encode"})
    if index % 2 == 0:
        events.append({"op": "decode", "doc": document(rng)})
        events.append({"op": "loop", "stack": stack, "steps": rng.randint(0, 4), "cap": cap})
        script = [random_verdicts(rng, len(stack) + 1) for _ in range(rng.randint(0, 7))]
        events.append({"op": "run", "script": script})
        events.append({"op": "encode"})
    else:
        events.append({"op": "decode", "doc": json.loads(json.dumps(document(rng)))})
        events.append({"op": "encode"})
    return events


BRIDGE = Bridge(
    area="director",
    count=300,
    generate=generate,
    model=model_transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
