"""The Director stack: the model of control.md S5 (bend/director.bend of the seed).

Read it next to 000_f7323c157e80a40d.txt, S5 items 1, 2, 3, 6 and 8.

- A layer has a kind and a budget (S5, first paragraph). The model keeps a number for the
  kind (S5 "Not modelled": "the kind data of a layer (the model keeps a number for the
  kind)"): 0 goal, 1 autonomous run, 2 reminder, 3 forced tool call. ``decide`` never reads
  the kind; it is carried so that ``encode``/``decode`` keep it.
- A stack is a tuple of layers, bottom first, top last (the top decides first, S5.1).
- A verdict list gives the verdicts of one step from the top down: the first verdict is the
  top layer's, the next one the verdict of the layer that decides next. A layer with no
  verdict in the list defers (so every list is a total input; the adversary of S5 picks
  every verdict of every layer of every step).
- ``decide`` (S5.1, S5.2): the top layer decides first; Defer and Leave pass the decision
  down; Again and Stack{l} cost 1 unit of the layer's budget and yield when it has none;
  a push needs room: the layers above it (also those that deferred or left), the layer
  and the layers below must be fewer than the cap, else the loop fails. No layer deciding
  gives control back (a yield).
- The cap that a decision gets is directors.stackCap + 2 (S5.6: two places are kept for
  the goal and the autonomous run): ``full_cap``.
- ``tick`` (S5.3): one step of the loop of one run. Each continuation costs 1 step of the
  global budget; with no step left a continuation yields. The yield of a continuation that
  has no step leaves the stack as it was before the step: the continuation does not
  happen, so nothing of it is spent or removed (S5.4 reminder: "when the step does not
  continue (... or no step is left), the reminder defers: it stays on the stack"; derived
  from S5.3 and S5.4). A tick of an ended loop changes nothing (dir_end_is_final).
- ``encode``/``decode`` (S5.8): the stack as the tree document eukhe.directors, a JSON
  value: {"layers": [{"budget": b, "kind": name}, ...bottom first], "version": 1}. A layer
  may carry a "data" object (the kind data of production: reminder text, forced tool); the
  model ignores it. ``decode`` of a tree that is not sound is ``None``: another version
  (``true`` is not 1), an unknown or missing key at any depth, a budget that is not a whole
  number in 0..MAX_BUDGET, an unknown kind, data that is not an object of finite values.

The transcript printer (``transcript``) is the model side of the director bridge; its
``__main__`` prints the transcript of a scenario file (BRIDGE_MODEL_CMD).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Union

GOAL, AUTONOMOUS, REMINDER, FORCED = 0, 1, 2, 3
KIND_NAMES: tuple[str, ...] = ("goal", "autonomous", "reminder", "forced")

DEFAULT_STACK_CAP = 8  # directors.stackCap (S4 table, S5.6)
RESERVED = 2  # the places of the goal and the autonomous run (S5.6)
DEFAULT_MAX_STEPS = 200  # directors.maxSteps (S5.6)

CONTINUE, YIELD, FAIL = "continue", "yield", "fail"

DEFER, AGAIN, GIVE_BACK, STACK, LEAVE, ABORT = "defer", "again", "yield", "stack", "leave", "abort"


@dataclass(frozen=True)
class Layer:
    kind: int
    budget: int


@dataclass(frozen=True)
class Verdict:
    """One verdict; ``pushed`` is the layer l of Stack{l} (None for the other tags)."""

    tag: str
    pushed: Layer | None = None


Stack = tuple[Layer, ...]


@dataclass(frozen=True)
class Decision:
    """What one decision gives: the stack after it, the outcome, and the rule that fired."""

    stack: Stack
    outcome: str
    rule: str


@dataclass(frozen=True)
class Loop:
    """The loop of one run: its stack, the steps left of its global budget, and how it ended
    ("" while it runs, else "yield" or "fail")."""

    stack: Stack
    steps: int
    end: str


def full_cap(stack_cap: int) -> int:
    """S5.6: a stack holds at most directors.stackCap + 2 layers."""
    return stack_cap + RESERVED


def verdict_at(verdicts: tuple[Verdict, ...], index: int) -> Verdict:
    if index < len(verdicts):
        return verdicts[index]
    return Verdict(DEFER)


def deferred_above(stack: Stack, verdicts: tuple[Verdict, ...], position: int) -> Stack:
    """The layers above ``position`` that deferred when decide asked them (the top first, each
    with the next verdict of the list), bottom first: they stay above the deciding layer."""
    kept: Stack = ()
    above = position + 1
    while above < len(stack):
        if verdict_at(verdicts, len(stack) - 1 - above).tag == DEFER:
            kept = kept + (stack[above],)
        above += 1
    return kept


def decide(stack: Stack, verdicts: tuple[Verdict, ...], cap: int) -> Decision:
    """S5.1 and S5.2: ask the layers from the top down until one decides.

    pre: 1 <= cap and len(stack) <= cap
    post: len(__return__.stack) <= cap
    post: len(__return__.stack) <= len(stack) + 1
    post: __return__.outcome != CONTINUE or __return__.rule in ("again", "push")
    """
    position = len(stack) - 1
    while position >= 0:
        above = len(stack) - 1 - position  # every layer above: those that deferred and those that left
        verdict = verdict_at(verdicts, above)
        if verdict.tag == DEFER or verdict.tag == LEAVE:
            position -= 1
            continue
        layer = stack[position]
        below = stack[:position]
        kept_above = deferred_above(stack, verdicts, position)
        if verdict.tag == AGAIN:
            if layer.budget == 0:
                return Decision(below + (layer,) + kept_above, YIELD, "again_no_budget")
            spent = Layer(layer.kind, layer.budget - 1)
            return Decision(below + (spent,) + kept_above, CONTINUE, "again")
        if verdict.tag == STACK and verdict.pushed is not None:
            if layer.budget == 0:
                return Decision(below + (layer,) + kept_above, YIELD, "push_no_budget")
            full = above + 1 + len(below)
            if full >= cap:
                return Decision(below + (layer,) + kept_above, FAIL, "push_no_room")
            spent = Layer(layer.kind, layer.budget - 1)
            return Decision(below + (spent, verdict.pushed) + kept_above, CONTINUE, "push")
        if verdict.tag == ABORT:
            return Decision(below + (layer,) + kept_above, FAIL, "abort")
        # Yield (and a Stack verdict without a layer, which no parser makes) gives back.
        return Decision(below + (layer,) + kept_above, YIELD, "yield")
    return Decision(deferred_above(stack, verdicts, -1), YIELD, "none")


def limits_ok(values: tuple["Tree", ...]) -> bool:
    """directors.stackCap, directors.maxSteps, directors.stallSteps, autonomous.maxContinuations:
    each a whole number from 0 to MAX_BUDGET (S5.6, S5.8: Nat settings; a limit is a signed 64-bit
    integer in the seed's Rust, derived)."""
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > MAX_BUDGET:
            return False
    return True


def start(stack: Stack, steps: int) -> Loop:
    return Loop(stack, steps, "")


def tick(loop: Loop, verdicts: tuple[Verdict, ...], cap: int) -> tuple[Loop, str]:
    """S5.3: one step of the loop; returns the loop after it and the rule that fired.

    pre: 1 <= cap and len(loop.stack) <= cap and loop.steps >= 0
    post: loop.end == "" or __return__[0] == loop
    post: 0 <= __return__[0].steps <= loop.steps
    """
    if loop.end != "":
        return loop, "ended"
    decision = decide(loop.stack, verdicts, cap)
    if decision.outcome == CONTINUE:
        if loop.steps == 0:
            return Loop(loop.stack, 0, YIELD), "no_step"
        return Loop(decision.stack, loop.steps - 1, ""), decision.rule
    return Loop(decision.stack, loop.steps, decision.outcome), decision.rule


def run(loop: Loop, script: tuple[tuple[Verdict, ...], ...], cap: int) -> tuple[tuple[Loop, str], ...]:
    """Every tick of a script of verdict lists, in order: the loop after each and its rule."""
    ticks: tuple[tuple[Loop, str], ...] = ()
    current = loop
    for verdicts in script:
        current, rule = tick(current, verdicts, cap)
        ticks = ticks + ((current, rule),)
    return ticks


# -- the tree document (S5.8) ----------------------------------------------------------------


@dataclass(frozen=True)
class Obj:
    """A JSON object of the tree: (key, value) pairs, keys sorted."""

    fields: tuple[tuple[str, "Tree"], ...]


Tree = Union[int, float, str, bool, None, tuple["Tree", ...], Obj]

VERSION = 1
MAX_BUDGET = 2**63 - 1  # a budget is a signed 64-bit integer in the seed's Rust (derived)


def encode_layer(layer: Layer) -> Obj:
    return Obj((("budget", layer.budget), ("kind", KIND_NAMES[layer.kind])))


def encode(stack: Stack) -> Obj:
    """S5.8: the stack as the document eukhe.directors, bottom first."""
    layers: tuple[Tree, ...] = ()
    for layer in stack:
        layers = layers + (encode_layer(layer),)
    return Obj((("layers", layers), ("version", VERSION)))


def field(tree: Obj, key: str) -> tuple[bool, Tree]:
    for name, value in tree.fields:
        if name == key:
            return True, value
    return False, None


def keys(tree: Obj) -> tuple[str, ...]:
    names: tuple[str, ...] = ()
    for name, _ in tree.fields:
        names = names + (name,)
    return names


def decode_layer(tree: Tree) -> Layer | None:
    if not isinstance(tree, Obj):
        return None
    for name in keys(tree):
        if name not in ("budget", "kind", "data"):
            return None
    has_budget, budget = field(tree, "budget")
    has_kind, kind = field(tree, "kind")
    has_data, data = field(tree, "data")
    if not has_budget or not has_kind:
        return None
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0 or budget > MAX_BUDGET:
        return None
    if not isinstance(kind, str) or kind not in KIND_NAMES:
        return None
    if has_data and not (isinstance(data, Obj) and finite(data)):
        return None
    return Layer(KIND_NAMES.index(kind), budget)


def finite(tree: Tree) -> bool:
    """A tree with no NaN or infinite number (JSON has none)."""
    if isinstance(tree, float):
        return tree - tree == 0.0
    if isinstance(tree, Obj):
        for _, value in tree.fields:
            if not finite(value):
                return False
    if isinstance(tree, tuple):
        for item in tree:
            if not finite(item):
                return False
    return True


def decode(tree: Tree) -> Stack | None:
    """The stack a sound tree holds; None for a tree that is not sound."""
    if not isinstance(tree, Obj):
        return None
    if sorted(keys(tree)) != ["layers", "version"]:
        return None
    _, version = field(tree, "version")
    _, layers = field(tree, "layers")
    if isinstance(version, bool) or version != VERSION or not isinstance(layers, tuple):
        return None
    stack: Stack = ()
    for item in layers:
        layer = decode_layer(item)
        if layer is None:
            return None
        stack = stack + (layer,)
    return stack


def sound(tree: Tree) -> bool:
    """A sound tree: a document that decodes to a stack (S5.8)."""
    return decode(tree) is not None


# -- a history of the tree (S5.8: a rewind brings back the stack as of its entry) ----------------


@dataclass(frozen=True)
class Commit:
    """One commit of a conversation: its parent (an index into the history, -1 for the root)
    and the eukhe.directors value it sets (None: the commit does not touch the document)."""

    parent: int
    tree: Tree | None


History = tuple[Commit, ...]


def as_of(history: History, entry: int) -> Tree | None:
    """The document as of an entry: the value set by the nearest commit at or above it."""
    at = entry
    while at >= 0:
        commit = history[at]
        if commit.tree is not None:
            return commit.tree
        at = commit.parent
    return None


def rewind(history: History, entry: int) -> Stack | None:
    """S5.8: a rewind to an entry reads the stack as of it (no document yet: the empty stack);
    None when the tree there is not sound."""
    tree = as_of(history, entry)
    if tree is None:
        return ()
    return decode(tree)


# -- JSON in and out (the bridge's scenario values and the printed document) -----------------


def from_json(value: object) -> Tree:
    """A parsed JSON value as a tree (objects become Obj with sorted keys)."""
    if isinstance(value, dict):
        pairs: tuple[tuple[str, Tree], ...] = ()
        for key in sorted(value):
            pairs = pairs + ((str(key), from_json(value[key])),)
        return Obj(pairs)
    if isinstance(value, list):
        items: tuple[Tree, ...] = ()
        for item in value:
            items = items + (from_json(item),)
        return items
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def show(tree: Tree) -> str:
    """Canonical JSON of a tree: sorted keys, no spaces."""
    if isinstance(tree, Obj):
        return "{" + ",".join(json.dumps(k) + ":" + show(v) for k, v in tree.fields) + "}"
    if isinstance(tree, tuple):
        return "[" + ",".join(show(item) for item in tree) + "]"
    return json.dumps(tree)


# -- the bridge transcript -------------------------------------------------------------------


def layer_of(value: object) -> Layer:
    """A scenario layer: [kind, budget]."""
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"a layer is [kind, budget], not {value!r}")
    kind, budget = value
    if not isinstance(kind, int) or not 0 <= kind < len(KIND_NAMES) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"bad layer {value!r}")
    return Layer(kind, budget)


def stack_of(value: object) -> Stack:
    if not isinstance(value, list):
        raise ValueError(f"a stack is a list of layers, not {value!r}")
    return tuple(layer_of(item) for item in value)


def verdict_of(value: object) -> Verdict:
    """A scenario verdict: "defer", "again", "yield", "leave", "abort" or ["stack", kind, budget]."""
    if isinstance(value, str) and value in (DEFER, AGAIN, GIVE_BACK, LEAVE, ABORT):
        return Verdict(value)
    if isinstance(value, list) and len(value) == 3 and value[0] == STACK:
        return Verdict(STACK, layer_of(value[1:]))
    raise ValueError(f"bad verdict {value!r}")


def verdicts_of(value: object) -> tuple[Verdict, ...]:
    if not isinstance(value, list):
        raise ValueError(f"a verdict list is a list, not {value!r}")
    return tuple(verdict_of(item) for item in value)


def show_stack(stack: Stack) -> str:
    return "[" + ",".join(f"{KIND_NAMES[layer.kind]}:{layer.budget}" for layer in stack) + "]"


def show_loop(loop: Loop) -> str:
    return f"stack={show_stack(loop.stack)} steps={loop.steps} end={loop.end or '-'}"


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the director bridge.

    Events: {"op": "decide", "stack", "verdicts", "cap"}; {"op": "loop", "stack", "steps",
    "cap"} starts a loop that the next "tick" {"verdicts"} and "run" {"script"} events
    drive; {"op": "encode"} prints the document of the loop's stack; {"op": "decode",
    "doc"} decodes a document and, when it is sound, makes its stack the loop's stack.
    """
    lines: list[str] = []
    loop = start((), 0)
    cap = full_cap(DEFAULT_STACK_CAP)
    for number, event in enumerate(events):
        op = event.get("op")
        if op == "decide":
            decision = decide(stack_of(event["stack"]), verdicts_of(event["verdicts"]), int(str(event["cap"])))
            lines.append(
                f"{number} decide stack={show_stack(decision.stack)} outcome={decision.outcome} rule={decision.rule}"
            )
        elif op == "loop":
            loop = start(stack_of(event["stack"]), int(str(event["steps"])))
            cap = int(str(event["cap"]))
            lines.append(f"{number} loop {show_loop(loop)} cap={cap}")
        elif op == "tick":
            loop, rule = tick(loop, verdicts_of(event["verdicts"]), cap)
            lines.append(f"{number} tick {show_loop(loop)} rule={rule}")
        elif op == "run":
            script_value = event["script"]
            if not isinstance(script_value, list):
                raise ValueError("a script is a list of verdict lists")
            script = tuple(verdicts_of(item) for item in script_value)
            ticks = run(loop, script, cap)
            rules = ",".join(rule for _, rule in ticks)
            if ticks:
                loop = ticks[-1][0]
            lines.append(f"{number} run ticks={len(ticks)} rules={rules} {show_loop(loop)}")
        elif op == "encode":
            lines.append(f"{number} encode {show(encode(loop.stack))}")
        elif op == "limits":
            values = event["values"]
            if not isinstance(values, list):
                raise ValueError("limits are a list")
            lines.append(f"{number} limits {'ok' if limits_ok(tuple(from_json(v) for v in values)) else 'refused'}")
        elif op == "decode":
            decoded = decode(from_json(event["doc"]))
            if decoded is None:
                lines.append(f"{number} decode unsound")
            else:
                loop = Loop(decoded, loop.steps, loop.end)
                lines.append(f"{number} decode stack={show_stack(decoded)}")
        else:
            raise ValueError(f"event {number}: unknown op {op!r}")
    return lines


if __name__ == "__main__":
    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
