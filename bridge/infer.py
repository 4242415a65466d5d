"""The quirks bridge (inference.md S6, "Tie"): generated rulebooks with queries.

Each scenario compiles one or two generated rulebooks (families, hosts, rules), asks a run of
queries, swaps two rules, compiles again and asks the same queries. Directives are the first
of each value type of Directive::ALL (plus prompt_progress, a capability-scoped one); values
come from small pools so clashes occur, with every wrong value kind, unknown directives,
unordered budgets, dialects lacking their operation; queries may name no family or host.
After each event both sides print the compile outcome, or the family, the hosts and every
directive's answer with its layer. The production side drives ``eukhe.inference.quirks`` and
prints through its own code; the model side is ``bend.infer.transcript``.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any

from bend import infer as model
from bridge.core import Bridge, Event
from eukhe.inference import quirks

QUERY_DIRECTIVES = [
    "adaptive_thinking",
    "strict_cap",
    "max_tokens_field",
    "thinking_budgets",
    "thinking_ladder",
    "count_tokens",
    "prompt_progress",
]

FAMILY_TEMPLATES: list[dict[str, Any]] = [
    {"id": "qwen-3.8", "pattern": "qw(?:en|q)", "min": [3, 8]},
    {"id": "qwen", "pattern": "qw(?:en|q)", "below": [3, 8]},
    {"id": "qwen-any", "pattern": "qwen"},
    {"id": "grok-4.3", "pattern": "grok-", "min": [4, 3], "below": [4, 5]},
    {"id": "grok-4.6", "pattern": "grok-", "min": [4, 6], "below": [4, 8]},
    {"id": "grok-wide", "pattern": "grok-", "min": [4]},
    {"id": "gpt-priority", "pattern": "gpt-", "min": [5], "below": [5, 4], "except": "mini"},
    {"id": "gpt-mini", "pattern": "gpt-", "except": "pro"},
    {"id": "claude", "pattern": "(?:[a-z]+\\.)*claude-"},
    {"id": "ünï", "pattern": "ünï-?", "min": [1]},
    {"id": "gemma-4", "pattern": "gemma-", "min": [4], "below": [5]},
    {"id": "empty", "pattern": ""},
]
BAD_FAMILIES: list[dict[str, Any]] = [
    {"id": "broken", "pattern": "qwen("},
    {"id": "broken-except", "pattern": "qwen", "except": "[a-"},
]
HOST_TEMPLATES: list[dict[str, Any]] = [
    {"id": "anthropic", "api": "anthropic-messages"},
    {"id": "a-api", "api": "openai-completions"},
    {"id": "openrouter", "provider": "openrouter"},
    {"id": "openrouter-url", "urls": ["openrouter.ai"]},
    {"id": "loopback", "urls": ["localhost", "127.0.0.1"]},
    {"id": "example", "urls": ["example.com"]},
    {"id": "api-example", "urls": ["api.example.com"]},
    {"id": "b-example", "urls": ["example.com"]},
    {"id": "openai", "provider": "openai", "scope": "capabilities"},
    {"id": "llama-cpp", "provider": "llama-cpp", "urls": ["localhost"], "scope": "capabilities"},
    {"id": "ünï-host", "urls": ["ünï.example"]},
]
BAD_HOSTS: list[dict[str, Any]] = [{"id": "weird", "scope": "everything"}]

MODEL_IDS = [
    "qwen3.8-27b",
    "qwen/qwen3-8b",
    "qwq-32b",
    "qwen-8b",
    "Qwen/Qwen4-1.5B",
    "qwen3..8",
    "grok-4.3",
    "grok-4.6",
    "grok-4.7",
    "grok-5",
    "gpt-5.2",
    "gpt-5.5-mini",
    "gpt-5.5-pro",
    "us.anthropic.claude-opus-4-6-v1:0",
    "anthropic/claude-haiku-5.5",
    "ünï-2",
    "ünï",
    "gemma-4-27b",
    "gemma-" + "9" * 60,
    "",
    "plain-model",
    "qwen٣",
]
NAMES = [None, None, None, "Qwen3.8 Coder", "GPT-5.5 mini", "Grok 4.6", "", "ünï 3"]
PROVIDERS = ["", "openrouter", "openai", "llama-cpp", "my-proxy", "anthropic"]
APIS = ["", "openai-completions", "anthropic-messages", "openai-responses"]
URLS = [
    "",
    "http://127.0.0.1:8080/v1",
    "https://openrouter.ai/api/v1",
    "https://api.example.com/v1",
    "https://example.com",
    "http://LOCALHOST:11434",
    "https://ünï.example/v1",
]

# Value pools per directive: right types first, then every wrong kind.
GOOD: dict[str, list[Any]] = {
    "adaptive_thinking": [True, False],
    "strict_cap": [0, 1, 8, 10**30],
    "max_tokens_field": ["max_tokens", "max_completion_tokens", "", "ünï"],
    "thinking_budgets": [[128, 2048, 8192, 32768], [0, 0, 0, 0], [1, 2, 3, 10**20]],
    "thinking_ladder": [{"off": "none", "minimal": None, "xhigh": "xhigh"}, {}, {"off": None, "max": "max"}],
    "count_tokens": ["openai", "anthropic", False],
    "prompt_progress": [True, False],
}
WRONG: list[Any] = [1, 0, -1, 1.5, "yes", "", None, [1], {"a": 1}, True, 10**40, math.inf]
UNORDERED = [[2048, 128, 8192, 32768], [1, 2, 3, 0]]
NO_OPERATION = ["ollama", "nobody", "OPENAI"]
BAD_LADDERS: list[Any] = [{"ultra": "x"}, {"off": 1}, {"off": True}]
UNKNOWN_DIRECTIVES = ["reasoning_effort", "", "Adaptive_Thinking", "ünï_directive"]
LAYERS = ["family", "model", "host"]


def _value(rng: random.Random, directive: str, clean: bool) -> Any:
    roll = rng.random()
    if clean or roll < 0.8:
        return rng.choice(GOOD[directive])
    if directive == "thinking_budgets" and roll < 0.86:
        return rng.choice(UNORDERED)
    if directive == "count_tokens" and roll < 0.86:
        return rng.choice(NO_OPERATION)
    if directive == "thinking_ladder" and roll < 0.86:
        return rng.choice(BAD_LADDERS)
    return rng.choice(WRONG)


def _target(rng: random.Random, layer: str, families: list[dict[str, Any]], hosts: list[dict[str, Any]]) -> str:
    if layer == "family" and families and rng.random() < 0.85:
        return str(rng.choice(families)["id"])
    if layer == "host" and hosts and rng.random() < 0.85:
        return str(rng.choice(hosts)["id"])
    if layer == "model" and rng.random() < 0.85:
        return rng.choice(MODEL_IDS)
    return rng.choice(["nobody", "", "ünï"])


def _rulebook(rng: random.Random, planted: str = "") -> Event:
    clean = rng.random() < 0.5  # a rulebook with no bad value, family or host (clashes may remain)
    families = [dict(f) for f in rng.sample(FAMILY_TEMPLATES, rng.randrange(0, 6))]
    hosts = [dict(h) for h in rng.sample(HOST_TEMPLATES, rng.randrange(0, 6))]
    if not clean and rng.random() < 0.06:
        families.append(dict(rng.choice(BAD_FAMILIES)))
    if not clean and rng.random() < 0.05 and families:
        families.append(dict(families[0]))
    if not clean and rng.random() < 0.05:
        hosts.append(dict(rng.choice(BAD_HOSTS)))
    if not clean and rng.random() < 0.05 and hosts:
        hosts.append(dict(hosts[0]))
    rules = []
    for _ in range(rng.randrange(0, 12)):
        layer = rng.choice(LAYERS) if clean or rng.random() > 0.05 else "tenant"
        target = _target(rng, layer, families, hosts)
        pairs: list[list[Any]] = []
        for _ in range(rng.randrange(1, 4)):
            if not clean and rng.random() < 0.06:
                pairs.append([rng.choice(UNKNOWN_DIRECTIVES), True])
            else:
                directive = rng.choice(QUERY_DIRECTIVES)
                if clean and rng.random() < 0.9:  # one value per (layer, target, directive): no clash
                    pool = GOOD[directive]
                    pairs.append([directive, pool[sum(map(ord, layer + target)) % len(pool)]])
                else:
                    pairs.append([directive, _value(rng, directive, clean)])
        rules.append({"layer": layer, "target": target, "set": pairs})
    if planted == "DuplicateHost":
        hosts += [{"id": "twin", "urls": ["example.com"]}, {"id": "twin", "provider": "openai"}]
    elif planted == "DuplicateFamily":
        families += [{"id": "twin", "pattern": "a"}, {"id": "twin", "pattern": "b"}]
    elif planted == "UnknownLayer":
        rules.append({"layer": "tenant", "target": "x", "set": [["adaptive_thinking", True]]})
    elif planted == "UnknownScope":
        hosts.append(dict(BAD_HOSTS[0]))
    elif planted == "NoOperation":
        rules.append({"layer": "model", "target": "m", "set": [["count_tokens", "ollama"]]})
    elif planted == "UnorderedBudgets":
        rules.append({"layer": "model", "target": "m", "set": [["thinking_budgets", UNORDERED[0]]]})
    return {"do": "rulebook", "families": families, "hosts": hosts, "rules": rules}


# Scenarios 0..5 each plant one compile error the random rulebooks reach only rarely.
PLANTED = ("DuplicateHost", "DuplicateFamily", "UnknownLayer", "UnknownScope", "NoOperation", "UnorderedBudgets")


def _query(rng: random.Random) -> Event:
    event: Event = {
        "do": "query",
        "model": rng.choice(MODEL_IDS),
        "provider": rng.choice(PROVIDERS),
        "api": rng.choice(APIS) if rng.random() < 0.4 else "",
        "base_url": rng.choice(URLS),
        "directives": QUERY_DIRECTIVES,
    }
    name = rng.choice(NAMES)
    if name is not None:
        event["name"] = name
    if rng.random() < 0.12:
        directive = rng.choice(QUERY_DIRECTIVES)
        event["compat"] = [[directive, rng.choice(GOOD[directive])]]
    return event


def generate(index: int) -> list[Event]:
    rng = random.Random(f"infer-{index}")
    events: list[Event] = []
    for round_ in range(1 if rng.random() < 0.7 else 2):
        book = _rulebook(rng, PLANTED[index] if index < len(PLANTED) and round_ == 0 else "")
        events.append(book)
        queries = [_query(rng) for _ in range(rng.randrange(3, 9))]
        events.extend(queries)
        count = len(book["rules"])
        if count >= 2:
            i, j = rng.sample(range(count), 2)
            events.append({"do": "swap", "i": i, "j": j})
            events.extend(queries)
    return events


# -- the production side -------------------------------------------------------------------------


def _text(value: str) -> str:
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in '"\\' or code < 32 or code > 126:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, tuple) and len(value) == 4 and all(type(v) is int for v in value):
        return "[" + ",".join(map(str, value)) + "]"
    return "{" + ",".join(f"{k}:{'null' if v is None else _text(v)}" for k, v in value) + "}"


def _definitions(event: Event) -> tuple[list[quirks.FamilyDef], list[quirks.HostDef], list[quirks.RuleDef]]:
    families = [
        quirks.FamilyDef(
            f["id"],
            f["pattern"],
            None if f.get("min") is None else tuple(f["min"]),
            None if f.get("below") is None else tuple(f["below"]),
            f.get("except"),
        )
        for f in event["families"]
    ]
    hosts = [quirks.HostDef(h["id"], h.get("api"), h.get("provider"), tuple(h.get("urls", [])), h.get("scope", "wire")) for h in event["hosts"]]
    rules = [quirks.RuleDef(r["layer"], r["target"], tuple((k, v) for k, v in r["set"])) for r in event["rules"]]
    return families, hosts, rules


def _compile(number: int, defs: tuple[list[quirks.FamilyDef], list[quirks.HostDef], list[quirks.RuleDef]]) -> tuple[quirks.Rulebook | None, str]:
    try:
        book = quirks.compile_rulebook(*defs)
    except quirks.QuirksError as error:
        return None, f"{number} compile {error}"
    return book, f"{number} compile ok settings={book.setting_count}"


def _compat(pairs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for directive, raw in pairs:
        try:
            out.setdefault(directive, quirks.check_value(directive, raw))
        except quirks.QuirksError:
            continue
    return out


def production(events: Sequence[Event]) -> list[str]:
    """The production side: compile_rulebook and Rulebook.query, printed by this bridge's code."""
    defs: tuple[list[quirks.FamilyDef], list[quirks.HostDef], list[quirks.RuleDef]] = ([], [], [])
    book: quirks.Rulebook | None = quirks.compile_rulebook([], [], [])
    lines = []
    for number, event in enumerate(events):
        kind = event["do"]
        if kind == "rulebook":
            defs = _definitions(event)
            book, line = _compile(number, defs)
        elif kind == "swap":
            rules = list(defs[2])
            i, j = int(event["i"]), int(event["j"])
            if i < len(rules) and j < len(rules):
                rules[i], rules[j] = rules[j], rules[i]
            defs = (defs[0], defs[1], rules)
            book, line = _compile(number, defs)
        elif book is None:
            line = f"{number} query no rulebook"
        else:
            key = quirks.ModelKey(
                str(event["model"]),
                event.get("name"),
                str(event.get("provider", "")),
                str(event.get("api", "")),
                str(event.get("base_url", "")),
                _compat(event.get("compat", [])),
            )
            family = book.family(key.id, key.name)
            fam = family.id or (f"overlap({','.join(family.overlap)})" if family.overlap else "-")
            wire = book.host(key.api, key.provider, key.base_url)
            caps = book.host(key.api, key.provider, key.base_url, capabilities=True)
            parts = [f"{number} family={fam} host={wire or '-'} caps_host={caps or '-'}"]
            for directive in event["directives"]:
                answer = book.query(key, directive)
                parts.append(f"{directive}={_shown(answer.value)}@{answer.layer}" if answer.known else f"{directive}=unknown")
            line = " ".join(parts)
        lines.append(line)
    return lines


# -- coverage ---------------------------------------------------------------------------------------

CASES = frozenset(
    {
        "compile ok",
        *(f"compile error {kind}" for kind in model.ERROR_KINDS if kind != model.FAMILY_OVERLAP),
        "answer from compat",
        "answer from host",
        "answer from model",
        "answer from family",
        "host answers over a family rule",
        "unknown: no rule applies",
        "family overlap: no family",
        "family out of its revision range",
        "a size read as no revision",
        "family except-regex excludes",
        "family by name",
        "host by wire API",
        "host by provider",
        "host by URL fragment",
        "URL fragment tie to the smaller host id",
        "provider host on a loopback URL keeps the provider host",
        "wire lookup skips a capabilities host",
        "swap of two rules",
        "swap of two rules of a rulebook that does not compile",
        # input classes
        "query naming no family",
        "query naming no host",
        "empty model id",
        "unicode model id",
        "huge revision digits",
        "unknown directive",
        "wrong type: int for bool",
        "wrong type: float",
        "wrong type: null",
        "wrong type: list",
        "wrong type: object",
        "wrong type: string for int",
        "negative int",
        "huge int value",
        "empty string value",
        "unicode string value",
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    """Which rule cases and input classes a scenario reaches, judged on the model's answers."""
    cases: set[str] = set()
    compiled: model.Compiled | model.QuirksError = model.compile_book(model.Book((), (), ()))
    book = model.Book((), (), ())
    for event in events:
        kind = event["do"]
        if kind in ("rulebook", "swap"):
            book = model.book_of(event) if kind == "rulebook" else model.swapped(book, event["i"], event["j"])
            compiled = model.compile_book(book)
            if kind == "swap":
                cases.add("swap of two rules" if isinstance(compiled, model.Compiled) else "swap of two rules of a rulebook that does not compile")
            if isinstance(compiled, model.QuirksError):
                cases.add(f"compile error {compiled.kind}")
            else:
                cases.add("compile ok")
            for rule in book.rules:
                for directive, value in rule.directives:
                    expected = model.value_type(directive)
                    if expected is None:
                        cases.add("unknown directive")
                    elif type(value) is int and expected == model.BOOL:
                        cases.add("wrong type: int for bool")
                    elif type(value) is float:
                        cases.add("wrong type: float")
                    elif value is None:
                        cases.add("wrong type: null")
                    elif type(value) is list and expected != model.BUDGETS:
                        cases.add("wrong type: list")
                    elif type(value) is dict and expected != model.LADDER:
                        cases.add("wrong type: object")
                    elif type(value) is str and expected == model.INT:
                        cases.add("wrong type: string for int")
                    if type(value) is int and value < 0:
                        cases.add("negative int")
                    if type(value) is int and value > 2**64:
                        cases.add("huge int value")
                    if value == "":
                        cases.add("empty string value")
                    if isinstance(value, str) and not value.isascii():
                        cases.add("unicode string value")
            continue
        if not isinstance(compiled, model.Compiled):
            continue
        query = model.query_of(event)
        cases |= _query_cases(compiled, query, event["directives"])
    return cases


def _query_cases(compiled: model.Compiled, query: model.Query, directives: list[str]) -> set[str]:
    cases: set[str] = set()
    fam = model.family_of(compiled.families, query.model_id, query.name)
    bare = model.bare(query.model_id)
    if query.model_id == "":
        cases.add("empty model id")
    if not query.model_id.isascii():
        cases.add("unicode model id")
    if any(len(run) > 30 for run in "".join(c if c.isdigit() else " " for c in query.model_id).split()):
        cases.add("huge revision digits")
    if fam.overlap:
        cases.add("family overlap: no family")
    elif fam.family is None:
        cases.add("query naming no family")
    for family in compiled.families:
        found = re.match(family.pattern, bare)
        if found is None:
            continue
        excluded = family.exclude is not None and re.search(family.exclude, bare) is not None
        if excluded:
            cases.add("family except-regex excludes")
        elif not model.family_matches(family, bare):
            cases.add("family out of its revision range")
        rest = bare[found.end() :]
        if model.revision(rest) == (0,) and any(c.isdigit() for c in rest) and "b" in rest:
            cases.add("a size read as no revision")
        if query.name is not None and not model.family_matches(family, bare) and model.family_matches(family, query.name.lower()):
            cases.add("family by name")
    wire = model.host_of(compiled.hosts, query.api, query.provider, query.base_url, model.WIRE)
    caps = model.host_of(compiled.hosts, query.api, query.provider, query.base_url, model.CAPS)
    if wire is None:
        cases.add("query naming no host")
    if wire != caps:
        cases.add("wire lookup skips a capabilities host")
    for host in compiled.hosts:
        if host.id != wire:
            continue
        if query.api and host.api == query.api:
            cases.add("host by wire API")
        elif query.provider and host.provider == query.provider:
            cases.add("host by provider")
            if "127.0.0.1" in query.base_url or "localhost" in query.base_url.lower():
                cases.add("provider host on a loopback URL keeps the provider host")
        else:
            cases.add("host by URL fragment")
            same = [h.id for h in compiled.hosts if h.scope == model.WIRE and any(f and f.lower() in query.base_url.lower() for f in h.urls)]
            lengths = {h.id: max((len(f) for f in h.urls if f and f.lower() in query.base_url.lower()), default=0) for h in compiled.hosts if h.id in same}
            if list(lengths.values()).count(lengths.get(wire, -1)) > 1:
                cases.add("URL fragment tie to the smaller host id")
    for directive in directives:
        answer = model.lookup(compiled, query, directive)
        if not answer.known:
            cases.add("unknown: no rule applies")
            continue
        cases.add(f"answer from {answer.layer}")
        if answer.layer == model.HOST and model.setting(compiled, model.FAMILY, fam.family, directive).known:
            cases.add("host answers over a family rule")
    return cases


BRIDGE = Bridge(
    area="infer",
    count=300,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
