"""The infer laws of inference.md S6, part 1: the quirks rulebook (S6.1), the thinking ladder
(S6.9), the forced call (S6.3) and the strict plan (S6.4); part 2 (issue 14, at the end of this
file): the repetition guard (S6.5), the compaction threshold (S6.6), the entries of the compiled
models, tool calls at stream end (S6.10) and argument repair.

Judges are independent of the model: the expected answers come from ``spec.oracles.infer``
(the seed's tables and rules as data) or from the construction of the domain (a query whose
provider is the one a host names has that host by construction), never from the model's
lookup, family or host functions.

What makes each domain finite, and why most laws are bounded, not proved:
- Lookup: a rulebook over 2 families, 2 models, 2 hosts, each (layer, target) slot absent or
  one of two values (3^6 = 729 rulebooks), 2 model ids x 3 providers x 3 compat states, and
  a set and a never-set directive. Rulebooks are unbounded (any number of rules, targets and
  directives), so enumerating this universe is bounded; the quirks bridge (300 generated
  rulebooks) hunts beyond it. Beside it, quirk_unknown_when_none, quirk_known_when_some and
  quirk_highest_wins are proved of lookup's and setting's code for every compiled rulebook, query
  and directive: each search an induction on its tuple (compat, the settings), its callees
  (scope_of, host_of, family_of, setting) abstracted to every outcome and values opaque
  (``_lookup_proof``). A rule applies to a slot when the compiled settings hold it (compile_book
  puts there each slot's first accepted value: ``_compile_step``).
- Compile: every directive of the oracle's table with value pools of each type; unknown names
  from a pool and from Hypothesis; rule lists of length <= 4 over 8 rules (valid, clashing,
  each error kind). Beside them, the four compile laws and quirk_order_free are proved of
  compile_book's code for every book: its loop over the rules is an induction whose step runs
  compile_book itself on one rule's directive from any state of its two lists (given to them as
  the loop begins: ``_RulesFrom``, ``_DirectivesFrom``), canonical and host_scope abstracted to
  every outcome (``_compile_step``, ``_compile_end``, ``_least_search``); what follows from the
  step for each law is said in its proof's docstring.
- Ladder: chosen_ladder and offered are proved of encodings spec.z3gen generates from their code,
  for every level map and default ladders (offered walks the 7 levels and calls entry_of, whose
  walk over the map is proved by induction). Beside the proofs, a map has 7 entries, each
  missing, null or a wire string (3^7 = 2,187 maps); the rules never read a wire string's text,
  so one stands for all (``quirk_ladder_shipped_is_s10`` runs the rules on opaque wire strings
  that raise when read, spec.laws.effort's whole type of models: proved). Default ladders are
  subsets of the 7 levels in ladder order; ``quirk_ladder_default_last`` enumerates all 128 x 128
  of them with both reasoning values: a whole finite domain, so it is proved.
- Forced call: ``flag`` and ``after`` take naturals (any attempt, any retry count), so no
  domain of them is whole: the seed's rules are proved with z3 for every natural, of encodings
  (``@encoding``) tied to the real functions on every attempt and retry count up to 16:
  proved-for-encoding. ``force_bounded`` is an induction on the attempts (``force`` makes
  attempt i + 1 only after ``after``'s step on attempt i says retry), over the same encoding:
  proved-for-encoding too; the other run laws are bounded (retries <= 6, every reply list of
  length <= 7) and hunted further with Hypothesis.
- Strict plan: tools lists up to 5 with priorities 0..n-1 (every weak order of n tools), caps
  0..6; the comparison of priorities is all the plan reads, so this covers every order of at
  most 5 tools, and Hypothesis hunts longer lists with any integers.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import dataclasses
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, get_args

import z3
from hypothesis import strategies as st

from bend import effort as s10
from bend import infer as m
from eukhe.inference import constrained, force, ladder, quirks
from eukhe.inference.wire import Message as WireMessage
from eukhe.inference.wire.events import ToolCall as WireCall
from eukhe.inference.wire import Reply as WireReply
from eukhe.inference.wire import Request as WireRequest
from eukhe.inference.wire import Tool as WireTool
from eukhe.inference.wire import WireModel, client_for, collect
from eukhe.inference.wire.events import BadRequest, Event, ThinkingDelta, ThinkingSignature, WireError
from eukhe.inference.wire.plan import Image as WireImage
from eukhe.inference.wire.plan import Thought as WireThought
from eukhe.inference.wire.pool import Pool, PoolClosed
from eukhe.inference.wire.retry import Policy, Retrying
from eukhe.inference.wire.thoughts import Thoughts
from spec import loopback as lb
from spec.evidence import Domain, Evidence, Finite, LawFailed, Tie, all_of, also, boolean, bounded, domain, encoding, examples, exhaust, induction, tie
from spec.oracles import infer as oracle
from spec.proofs import Cons, Opaque, Rest, callees, lemma, prove, stateless_loop
from spec.registry import BOUNDED, PROVED, PROVED_FOR_ENCODING, law
from spec.z3gen import Generated, Items, Maybe, facts, fresh, generated, item, member, same_items
from spec.z3gen import same as same_terms

# -- the wire: requests through the real clients of every built wire API (eukhe.inference.wire) to a
# real HTTP server on loopback (spec.loopback), for the laws that govern what goes on the wire or
# what is read from it. One server per process, started on first use; every batch runs in one event
# loop over one HTTP client, one request at a time, each answered by its own scripted reply. Each
# API's body and stream are read in its own form (spec.oracles.infer: FORM and the readers).

WIRE_APIS: tuple[str, ...] = (
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "azure-openai-responses",
    "openai-codex-responses",
    "google-vertex",
    "mistral-conversations",
    "bedrock-converse-stream",
)


@cache
def _wire_server() -> lb.LoopbackServer:
    started = lb.LoopbackServer().start()
    atexit.register(started.close)
    return started


def _wire_model(api: str, id: str = "m-1", provider: str = "loop", **fields: Any) -> WireModel:
    return WireModel(provider, id, api, lb.base_url(_wire_server(), api), "key", **fields)


def _wire_built(wire: WireModel, request: WireRequest, book: quirks.Rulebook | None = None) -> dict[str, Any]:
    """The JSON body the API's client builds for the request (no byte sent)."""
    client = client_for(wire, book=book)
    _url, _headers, body = client.build(request, client.plan(request))
    return body


WireOutcome = WireReply | WireError


@cache
def _wire_session() -> tuple[asyncio.AbstractEventLoop, Pool]:
    """One event loop and one HTTP pool for every batch, as a chat or an ask holds one (a client
    per batch would build a TLS context each time: most of an exchange's cost): one pooled client
    per provider, made on its first request (eukhe.inference.wire.pool)."""
    loop = asyncio.new_event_loop()
    pool = Pool()
    atexit.register(lambda: (loop.run_until_complete(pool.aclose()), loop.close()))
    return loop, pool


class _NoSleep:
    """The clock of the laws' retries: each wait is recorded, none is slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


# A transient failure before any reply (control.md S4's retry.*: HTTP 408, 429, 5xx, 529 are sent
# again, after the provider's hint when it gives one): in each form the providers say it.
TRANSIENT: tuple[lb.Fail, ...] = (
    lb.Fail(503),
    lb.Fail(429, '{"error": {"type": "rate_limit_error", "message": "slow down"}}', (("retry-after", "0"),)),
    lb.Fail(529, '{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}', (("retry-after-ms", "1"),)),
    lb.Fail(500, '[{"error": {"code": 500, "status": "INTERNAL", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0s"}]}}]'),
    lb.Fail(408, "request timeout", (("x-should-retry", "true"), ("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"))),
)


async def _noting(events: AsyncIterator[Event], thoughts: Thoughts) -> AsyncIterator[Event]:
    """The events, each thinking delta and signature also given to ``thoughts`` (as a turn keeps them)."""
    async for event in events:
        if isinstance(event, ThinkingDelta):
            thoughts.text(event)
        elif isinstance(event, ThinkingSignature):
            thoughts.sign(event)
        yield event


def _wire_exchange(
    batch: Sequence[tuple[WireModel, WireRequest, lb.Script | tuple[lb.Script, ...]]],
    book: quirks.Rulebook | None = None,
    thoughts: list[tuple[WireThought, ...]] | None = None,
) -> list[tuple[lb.Recorded, WireOutcome]]:
    """Each request sent by its API's client to the loopback server, which answers with the
    paired script; the request as the server received it, and the reply the client decoded (or
    the typed wire error it raised). A tuple of scripts answers the request and its retries in
    turn: the client is then wrapped in ``Retrying`` (no sleep), every attempt must send the same
    body, and the recorded request is the last attempt's. ``thoughts`` gets each reply's reasoning
    blocks as a turn assembles them (``Thoughts``)."""
    loop = _wire_server()
    events, pool = _wire_session()

    async def run() -> list[tuple[lb.Recorded, WireOutcome]]:
        out: list[tuple[lb.Recorded, WireOutcome]] = []
        for wire, request, script in batch:
            scripts = script if isinstance(script, tuple) else (script,)
            before = len(loop.requests)
            loop.script(*scripts)
            client = client_for(wire, book=book, pool=pool)
            outcome: WireOutcome
            noted = Thoughts()
            try:
                if len(scripts) == 1:
                    outcome = await collect(_noting(client.stream(request), noted))
                else:
                    clock = _NoSleep()
                    outcome = await collect(_noting(Retrying(client, Policy(max_retries=len(scripts) - 1), clock=clock, random=lambda: 0.5).stream(request), noted))
                    if len(clock.waits) != len(scripts) - 1:
                        raise LawFailed(f"{wire.api}: {len(scripts) - 1} transient failures, {len(clock.waits)} retries")
            except WireError as error:
                outcome = error
            attempts = loop.wait_requests(before + len(scripts))[before:]
            if any(a.body != attempts[0].body for a in attempts):
                raise LawFailed(f"{wire.api}: a retry sent another body than the first attempt")
            out.append((attempts[-1], outcome))
            if thoughts is not None:
                thoughts.append(noted.done())
        return out

    try:
        return events.run_until_complete(run())
    finally:
        with loop._lock:  # the records of a batch are read above; keep the server's list short
            loop.requests.clear()


# -- the lookup universe ---------------------------------------------------------------------------

D, NEVER = "adaptive_thinking", "prompt_caching"
FAMILIES = (m.Family("fam", "fam"), m.Family("gam", "gam"))
HOSTS = (m.Host("h", provider="p"), m.Host("k", provider="q2"))
SLOTS: tuple[tuple[str, str], ...] = (
    (m.FAMILY, "fam"),
    (m.FAMILY, "gam"),
    (m.MODEL, "fam-1"),
    (m.MODEL, "other"),
    (m.HOST, "h"),
    (m.HOST, "k"),
)
SLOT_VALUES: tuple[bool | None, ...] = (None, True, False)
MODEL_IDS = ("fam-1", "other")
PROVIDERS = ("p", "q", "")
COMPATS: tuple[bool | None, ...] = (None, True, False)
UNIVERSE = "729 rulebooks (2 families, 2 models, 2 hosts, each slot absent/true/false) x 2 models x 3 providers x 3 compat x 2 directives"

Slots = tuple[bool | None, ...]


def _rules(slots: Slots) -> tuple[m.Rule, ...]:
    return tuple(m.Rule(layer, target, ((D, v),)) for (layer, target), v in zip(SLOTS, slots) if v is not None)


def _books() -> Iterator[Slots]:
    yield from itertools.product(SLOT_VALUES, repeat=len(SLOTS))


def _compiled(rules: tuple[m.Rule, ...]) -> m.Compiled:
    out = m.compile_book(m.Book(FAMILIES, HOSTS, rules))
    if not isinstance(out, m.Compiled):
        raise LawFailed(f"a rulebook of the lookup universe does not compile: {out.text()}")
    return out


def _production(rules: tuple[m.Rule, ...]) -> quirks.Rulebook:
    return quirks.compile_rulebook(
        [quirks.FamilyDef(f.id, f.pattern) for f in FAMILIES],
        [quirks.HostDef(h.id, provider=h.provider) for h in HOSTS],
        [quirks.RuleDef(r.layer, r.target, r.directives) for r in rules],
    )


def _applying(slots: Slots, model_id: str, provider: str, directive: str) -> list[tuple[str, bool]]:
    """The oracle: the rules that apply to the query, highest layer first, by construction: host h
    is the host of provider p, family fam is the family of fam-1, the model slot of its id."""
    if directive != D:
        return []
    table = dict(zip(SLOTS, slots))
    found: list[tuple[str, bool]] = []
    for layer, target in ((m.HOST, "h" if provider == "p" else None), (m.MODEL, model_id), (m.FAMILY, "fam" if model_id == "fam-1" else None)):
        value = table.get((layer, target)) if target is not None else None
        if value is not None:
            found.append((layer, value))
    return found


Answer = tuple[bool, Any, str]


def _answers_model(compiled: m.Compiled, model_id: str, provider: str, compat: bool | None, directive: str) -> Answer:
    query = m.Query(model_id, provider=provider, compat=() if compat is None else ((directive, compat),))
    a = m.lookup(compiled, query, directive)
    return (a.known, a.value, a.layer)


def _answers_production(book: quirks.Rulebook, model_id: str, provider: str, compat: bool | None, directive: str) -> Answer:
    key = quirks.ModelKey(model_id, provider=provider, compat={} if compat is None else {directive: compat})
    a = book.query(key, directive)
    return (a.known, a.value, a.layer)


Prop = Any


def _over_lookups(prop: Prop, what: str) -> Evidence:
    """Run ``prop(slots, model, provider, compat, directive, answer)`` over the universe, on the
    model and on production."""

    def cases(side: str) -> Iterator[tuple[Any, ...]]:
        for slots in _books():
            rules = _rules(slots)
            ask: Any
            if side == "model":
                compiled = _compiled(rules)
                ask = lambda *q: _answers_model(compiled, *q)  # noqa: E731
            else:
                book = _production(rules)
                ask = lambda *q: _answers_production(book, *q)  # noqa: E731
            for model_id, provider, compat, directive in itertools.product(MODEL_IDS, PROVIDERS, COMPATS, (D, NEVER)):
                got = ask(model_id, provider, compat, directive)
                yield (slots, model_id, provider, compat, directive, got, prop(slots, model_id, provider, compat, directive, got))

    def run(side: str) -> Evidence:
        return bounded(cases(side), lambda case: bool(case[-1]), label=f"{UNIVERSE} ({what}, {side})")

    return run("model").with_production(run("production"))


# -- the lookup, checked on its code (exhaustion with abstraction, as spec.laws.cvar does) ----------
#
# lookup (bend.infer.lookup) searches query.compat for the directive, then asks setting for the host,
# the model and the family slot, highest first; setting searches the compiled settings for its
# (layer, target, directive). Both searches are loops over a tuple that carry no state (checked on
# their source: spec.proofs.stateless_loop), so each is an induction on the tuple, ``of`` the real function: the base runs it on the empty tuple, the step on a
# tuple known by its head alone (``Cons``: asking for more raises ``Rest``), and checks
# that a head that matches is answered without reading the rest, and that any other head sends the
# search on to the rest having done nothing else. lookup's callees (scope_of, host_of, family_of,
# setting) are abstracted (spec.proofs.callees) to every outcome: no host or a host, no family or a
# family, each slot's setting known or not. Values, the compiled rulebook's parts and the query's
# fields are opaque tokens (spec.proofs.Opaque) that raise on any read but identity; the layer,
# target and directive strings are words (``_Word``) that answer ``==`` (with each other and with the
# heads', equal ones being other objects) and raise on any other read (a prefix, a length, a hash),
# and each comparison is enumerated both ways, so one run covers every string in its place.


def _opaque(name: str) -> Any:
    """An opaque token (spec.proofs.Opaque) typed as anything, to stand in a model's dataclass."""
    return Opaque(name)


class _Word(Opaque):
    """A string the function under proof may read by ``==`` and ``!=`` alone: equal to a word of the
    same text (another object: identity is no shortcut), unequal to a word of another; any other
    read (a comparison with a str, a prefix, a length, a hash) refuses the law."""

    _text: str

    def __init__(self, text: str) -> None:
        super().__init__(text)
        object.__setattr__(self, "_text", text)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Word):
            raise LawFailed(f"{self!r} compared with {other!r}, not a word of the proof")
        return self._text == other._text

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def _word(text: str) -> Any:
    """A word (``_Word``) typed as anything, to stand in a model's str."""
    return _Word(text)


_Q_LAYER, _Q_TARGET, _Q_DIRECTIVE = _word("the layer"), _word("the target"), _word("the directive")


def _setting_search() -> Evidence:
    """``setting`` answers (True, v, layer) for the first compiled setting (layer, target,
    directive, v), Unknown for none or for no target: induction on the settings. Base: no target
    is Unknown without reading the rulebook (a token that raises when read); the empty settings
    are Unknown. Step: setting itself on settings known by their head, each of the head's layer,
    target and directive equal to the one asked or not: all three equal gives the head's value
    (the same object) at the layer asked, without reading the rest; any other head sends the
    search on to the rest (the loop carries no state: checked on its source, ``stateless_loop``)."""
    real = m.setting
    stateless_loop(real, "compiled.settings")
    bases = Finite("no target, or the empty settings", ("no target", "no settings"))

    def base(case: str) -> bool:
        if case == "no target":
            got = real(_opaque("the compiled rulebook"), _Q_LAYER, None, _Q_DIRECTIVE)
        else:
            got = real(m.Compiled(_opaque("families"), _opaque("hosts"), ()), _Q_LAYER, _Q_TARGET, _Q_DIRECTIVE)
        return got is m.UNKNOWN

    def step(layer_eq: bool, target_eq: bool, directive_eq: bool) -> bool:
        value = _opaque("the head's value")
        head = (_word("the layer" if layer_eq else "another layer"), _word("the target" if target_eq else "another target"),
                _word("the directive" if directive_eq else "another directive"), value)
        compiled = m.Compiled(_opaque("families"), _opaque("hosts"), Cons(head))  # type: ignore[arg-type]
        matches = layer_eq and target_eq and directive_eq
        try:
            got = real(compiled, _Q_LAYER, _Q_TARGET, _Q_DIRECTIVE)
        except Rest:
            return not matches
        return matches and got.known is True and got.value is value and got.layer == _Q_LAYER

    return induction(
        exhaust(domain(bases), base, about=[real]),
        exhaust(domain(boolean("the head's layer is the one asked"), boolean("its target is"), boolean("its directive is")), step, about=[real]),
        of="bend.infer.setting", label="the compiled settings searched (setting answers the first of the slot and directive)",
    )


# What a lookup law says of one abstract run: the head of compat named the directive (then no slot
# was asked), else each slot's setting known or not (host, model, family) and their answers; and
# the answer lookup gave.
Says = Callable[[bool, tuple[bool, ...], tuple[Any, ...], Any], bool]


def _lookup_search(what: str, says: Says) -> Evidence:
    """``lookup`` answers the first compat entry naming the directive (its value, the same object,
    at layer compat); else the first known of setting at the host slot (host_of's host, for the
    directive's scope), the model slot (the query's model id) and the family slot (family_of's
    family), in that order; else Unknown: induction on query.compat, of lookup, its callees
    abstracted. Base: compat empty, every outcome of host_of (no host, a host), family_of (no
    family, a family) and of the three settings (known or not): the calls made are exactly those,
    in that order, up to the first known, and the answer is it (the same object), else Unknown.
    Step: compat known by its head: a head naming the directive is the answer, nothing else
    called; any other head sends the search on to the rest, nothing else called (the loop carries
    no state: checked on its source, ``stateless_loop``). ``says`` (the law's own statement) holds
    of every run."""
    real = m.lookup
    stateless_loop(real, "query.compat")

    def run(compat: Any, host_found: bool, family_found: bool, known: tuple[bool, ...], calls: list[tuple[Any, ...]] | None = None) -> tuple[Any, list[tuple[Any, ...]], dict[str, Any]]:
        t = {name: _opaque(name) for name in ("families", "hosts", "settings", "model id", "name", "provider", "api", "base url", "scope", "host", "family")}
        compiled = m.Compiled(t["families"], t["hosts"], t["settings"])
        query = m.Query(t["model id"], t["name"], t["provider"], t["api"], t["base url"], compat)
        answers = tuple(m.Answer(True, _opaque(f"value of {layer}"), layer) if k else m.Answer(False, _opaque("no value"), _opaque("no layer")) for layer, k in zip((m.HOST, m.MODEL, m.FAMILY), known))
        calls = [] if calls is None else calls

        def scope_of(directive: Any) -> Any:
            calls.append(("scope_of", directive))
            return t["scope"]

        def host_of(*args: Any) -> Any:
            calls.append(("host_of", *args))
            return t["host"] if host_found else None

        def family_of(*args: Any) -> Any:
            calls.append(("family_of", *args))
            return m.FamilyAnswer(t["family"] if family_found else None)

        def setting(*args: Any) -> Any:
            calls.append(("setting", *args))
            return answers[sum(1 for c in calls if c[0] == "setting") - 1]

        with callees(m, scope_of=scope_of, host_of=host_of, family_of=family_of, setting=setting):
            got = real(compiled, query, _Q_DIRECTIVE)
        return got, calls, {"compiled": compiled, "query": query, "answers": answers, **t}

    def base(host_found: bool, family_found: bool, host_known: bool, model_known: bool, family_known: bool) -> bool:
        known = (host_known, model_known, family_known)
        got, calls, t = run((), host_found, family_found, known)
        slots = ((m.HOST, t["host"] if host_found else None), (m.MODEL, t["model id"]), (m.FAMILY, t["family"] if family_found else None))
        asked = known.index(True) + 1 if any(known) else 3
        want: list[tuple[Any, ...]] = [
            ("scope_of", _Q_DIRECTIVE),
            ("host_of", t["hosts"], t["api"], t["provider"], t["base url"], t["scope"]),
            ("family_of", t["families"], t["model id"], t["name"]),
            *(("setting", t["compiled"], layer, target, _Q_DIRECTIVE) for layer, target in slots[:asked]),
        ]
        answer = t["answers"][asked - 1] if any(known) else m.UNKNOWN
        return got is answer and _quirk_calls_alike(calls, want) and says(False, known, t["answers"], got)

    def step(names: bool) -> bool:
        value = _opaque("the compat value")
        calls: list[tuple[Any, ...]] = []  # none, before the answer or before the rest is asked for
        try:
            got, _, _ = run(Cons((_word("the directive" if names else "another directive"), value)), True, True, (True, True, True), calls)
        except Rest:
            return not names and not calls
        return names and not calls and got.known is True and got.value is value and got.layer == m.COMPAT and says(True, (), (), got)

    outcomes = domain(
        boolean("host_of finds a host"), boolean("family_of finds a family"),
        boolean("the host slot's setting is known"), boolean("the model slot's"), boolean("the family slot's"),
    )
    return induction(
        exhaust(outcomes, base, about=[real]),
        exhaust(domain(boolean("the head of compat names the directive")), step, about=[real]),
        of="bend.infer.lookup", label=f"explicit compat searched, then host > model > family ({what})",
    )


def _quirk_calls_alike(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    """Two call records alike: the same names, each argument the same object (a str or None equal)."""
    return len(got) == len(want) and all(
        len(g) == len(w) and all(x is y or (isinstance(y, str) and type(x) is str and x == y) for x, y in zip(g, w)) for g, w in zip(got, want)
    )


def _lookup_proof(what: str, says: Says) -> Evidence:
    """The law of lookup over every compiled rulebook, query and directive: lookup's search (of
    bend.infer.lookup) and setting's (of bend.infer.setting), each an induction on its code. A rule
    applies to a slot when the compiled settings hold (layer, target, directive) for it: setting's
    induction says that slot's setting is then known with the first such value, else Unknown."""
    return all_of(_lookup_search(what, says), _setting_search())


@law("quirk_unknown_when_none", "S6.1", "No applying rule and no explicit compat: the answer is Unknown.", PROVED)
def quirk_unknown_when_none() -> Evidence:
    """Proved of lookup's and setting's code (``_lookup_proof``): with no compat entry naming the
    directive the search reaches the slots, and with no setting of any slot known (no rule applies:
    setting's induction) the answer is Unknown itself. Beside it, the lookup universe on the model
    and on production (bounded)."""

    def says(named: bool, known: tuple[bool, ...], answers: tuple[Any, ...], got: Any) -> bool:
        return named or any(known) or got is m.UNKNOWN

    def prop(slots: Slots, model_id: str, provider: str, compat: bool | None, directive: str, got: Answer) -> bool:
        return bool(_applying(slots, model_id, provider, directive)) or compat is not None or got == (False, None, "")

    return also(_lookup_proof("no rule applies: Unknown", says), _over_lookups(prop, "no rule applies -> Unknown"))


@law("quirk_known_when_some", "S6.1", "When a rule applies (or compat names the directive) the lookup answers.", PROVED)
def quirk_known_when_some() -> Evidence:
    """Proved of lookup's and setting's code (``_lookup_proof``): a compat entry naming the directive
    is answered; else a slot whose setting is known (a rule applies to it: setting's induction)
    stops the search with a known answer. Beside it, the lookup universe (bounded)."""

    def says(named: bool, known: tuple[bool, ...], answers: tuple[Any, ...], got: Any) -> bool:
        return not (named or any(known)) or got.known is True

    def prop(slots: Slots, model_id: str, provider: str, compat: bool | None, directive: str, got: Answer) -> bool:
        return not (_applying(slots, model_id, provider, directive) or compat is not None) or got[0]

    return also(_lookup_proof("a rule applies: known", says), _over_lookups(prop, "a rule applies -> known"))


@law("quirk_highest_wins", "S6.1", "The answer is explicit compat, else the highest applying layer: host > model > family.", PROVED)
def quirk_highest_wins() -> Evidence:
    """Proved of lookup's and setting's code (``_lookup_proof``): a compat entry naming the directive
    is the answer at layer compat; else the answer is the first known of the host, model and family
    slots, in that order (each slot's answer the first setting of it: setting's induction), at its
    layer. Beside it, the lookup universe (bounded)."""
    order = oracle.LAYERS_HIGHEST_FIRST

    def says(named: bool, known: tuple[bool, ...], answers: tuple[Any, ...], got: Any) -> bool:
        if named:
            return got.known is True and got.layer == order[0]
        applying = [a for a, k in zip(answers, known) if k]
        return not applying or (got is applying[0] and got.layer == order[1 + known.index(True)])

    def prop(slots: Slots, model_id: str, provider: str, compat: bool | None, directive: str, got: Answer) -> bool:
        if compat is not None:
            return got == (True, compat, oracle.LAYERS_HIGHEST_FIRST[0])
        applying = _applying(slots, model_id, provider, directive)
        if not applying:
            return True
        layer, value = applying[0]
        return got == (True, value, layer) and oracle.LAYERS_HIGHEST_FIRST.index(layer) >= 1

    return also(_lookup_proof("the highest applying layer answers", says), _over_lookups(prop, "the highest layer answers"))


@law("quirk_order_free", "S6.1", "Swapping two rules of a compiled rulebook changes no answer.", PROVED)
def quirk_order_free() -> Evidence:
    """Proved of compile_book's and lookup's code for every book that compiles: the swapped book
    compiles too (quirk_compile_order_free's proof); by the step (``_compile_step``) compile_book
    keeps one setting per slot and directive, holding its first accepted value, and a book that
    compiles has no Clash, so all the slot's accepted values are equal to it: in either order each
    slot holds an equal value, and the families and hosts are the same. lookup answers from the
    query's compat and each slot's setting alone, and setting answers a slot's one setting
    (``_lookup_proof``): the same answers. Beside it, 729 rulebooks x every swap (bounded)."""
    queries = list(itertools.product(MODEL_IDS, PROVIDERS, (None,), (D, NEVER)))  # compat answers before any rule

    def side(production: bool) -> Evidence:
        def same(slots: Slots) -> bool:
            rules = _rules(slots)

            def answers(rs: tuple[m.Rule, ...]) -> list[Answer]:
                if production:
                    book = _production(rs)
                    return [_answers_production(book, *q) for q in queries]
                compiled = _compiled(rs)
                return [_answers_model(compiled, *q) for q in queries]

            first = answers(rules)
            for i, j in itertools.combinations(range(len(rules)), 2):
                swapped = list(rules)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                if answers(tuple(swapped)) != first:
                    return False
            return True

        return bounded(_books(), same, label=f"729 rulebooks x every swap of two rules x 12 queries (no compat: it answers before any rule) ({'production' if production else 'model'})")

    proof = all_of(_order_compile_proof(), _lookup_proof("the answer is the slots' settings'", lambda named, known, answers, got: True))
    return also(proof, side(False).with_production(side(True)))


# -- compile --------------------------------------------------------------------------------------------

VALID: dict[str, tuple[Any, ...]] = {
    "bool": (True, False),
    "int": (0, 1, 10**30),
    "str": ("", "a", "ünï"),
    "dialect": (False, "openai", "anthropic", "google", "llama-cpp", "ollama"),
    "budgets": ([1, 2, 3, 4], [0, 0, 0, 0], [128, 2048, 8192, 10**20]),
    "ladder": ({}, {"off": "none"}, {"off": None, "xhigh": "xhigh"}),
}
UNKNOWN_NAMES: tuple[str, ...] = (
    "",
    "reasoning_effort",
    "Adaptive_Thinking",
    "adaptive_thinking ",
    " strict_cap",
    "thinking-ladder",
    "ünï",
    "compat",
    "x" * 1000,
    *(name + "_" for name in oracle.DIRECTIVES),
)


def _model_compile(rules: tuple[m.Rule, ...], hosts: tuple[m.Host, ...] = ()) -> str:
    out = m.compile_book(m.Book((), hosts, rules))
    return "ok" if isinstance(out, m.Compiled) else out.text()


def _production_compile(rules: tuple[m.Rule, ...], hosts: tuple[m.Host, ...] = ()) -> str:
    try:
        quirks.compile_rulebook([], [quirks.HostDef(h.id, h.api, h.provider, h.urls, h.scope) for h in hosts], [quirks.RuleDef(r.layer, r.target, r.directives) for r in rules])
    except quirks.QuirksError as error:
        return str(error)
    return "ok"


def _both(prop: Any, cases: Any, label: str) -> Evidence:
    cases = list(cases)
    return bounded(cases, lambda c: prop(_model_compile, c), label=f"{label} (model)").with_production(
        bounded(cases, lambda c: prop(_production_compile, c), label=f"{label} (production)")
    )


VALID_RULES = (m.Rule(m.MODEL, "m", (("strict_cap", 3),)), m.Rule(m.FAMILY, "f", (("adaptive_thinking", True),)))


# -- compile_book, checked on its code (the compile laws and quirk_order_free) ---------------------
#
# compile_book folds the families, the hosts and then the rules into two lists it appends to in
# place (errors, settings), and returns _least(errors) when it is not None, else the compiled book.
# Its loop over the rules (each rule's directives, each scanned against the settings so far)
# carries as state only those two lists (the scan also a flag, ``already``, covered by settings of
# two entries: the state after the first is either value). The step runs compile_book itself on one
# directive of a rule (its first, or after another), from any state: just before that directive
# runs, the two lists (read from compile_book's frame, the objects themselves) are given the
# contents of an abstract state (no error or an earlier one; no setting, one or two, each of every
# kind: ``_RulesFrom``, ``_DirectivesFrom``), and when the loop asks for the next rule the state
# reached is checked (the same two lists, appended to exactly as the step says) and the run stops
# (``Rest``). Its callees canonical and host_scope are abstracted to every outcome, values
# are tokens or spies answering ``!=`` as enumerated, the strings are read by ``==`` and ``in``
# alone (each comparison enumerated both ways).


class _Unknown(Opaque):
    """A directive outside the table: it answers ``==`` with any name False (that is what being
    outside the table is) and refuses every other read, so value_type's outcome for it is its
    outcome for every name outside the table."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, str):
            raise LawFailed(f"{self!r} compared with {other!r}, not a name")
        return False

    __hash__ = None  # type: ignore[assignment]


class _Held:
    """A canonical value held by a setting: ``held != value`` answers as enumerated."""

    def __init__(self, differs: bool) -> None:
        self.differs = differs

    def __ne__(self, other: object) -> bool:
        return self.differs

    def __repr__(self) -> str:
        return f"<held value, {'differs' if self.differs else 'equal'}>"


class _RulesFrom:
    """The rules of a book, seen by compile_book's loop: when the loop begins, its two lists are
    given the abstract state's contents; then the rules; when the loop asks for more, ``at_end``
    checks the state reached and the run stops (``Rest``), or the loop ends (``stop`` False)."""

    def __init__(self, errors: list[Any], settings: list[Any], rules: tuple[Any, ...], at_end: Callable[[list[Any], list[Any]], None], stop: bool = True) -> None:
        self.errors, self.settings, self.rules, self.at_end, self.stop = errors, settings, rules, at_end, stop
        self.seen: tuple[list[Any], list[Any]] | None = None

    def __iter__(self) -> Iterator[Any]:
        frame = sys._getframe(1)
        if frame.f_code is not _COMPILE_BOOK.__code__:
            raise LawFailed(f"the rules were read by {frame.f_code.co_name}, not by compile_book's loop")
        errors, settings = frame.f_locals["errors"], frame.f_locals["settings"]
        errors[:], settings[:] = self.errors, self.settings
        self.seen = (errors, settings)
        yield from self.rules
        now = frame.f_locals  # the loop's names as it asks for more: still the same two lists
        if now["errors"] is not errors or now["settings"] is not settings:
            raise LawFailed("compile_book's loop over the rules bound its errors or settings to another list")
        self.at_end(errors, settings)
        if self.stop:
            raise Rest()


class _DirectivesFrom:
    """A rule's directives, seen by compile_book's loop over them: an earlier directive (when
    given) runs first from whatever state; then the loop's two lists are given the abstract
    state's contents again and the directive under proof runs; then the rules' ``_RulesFrom``
    checks the state when the loop asks for more."""

    def __init__(self, earlier: tuple[Any, ...], errors: list[Any], settings: list[Any], item: Any) -> None:
        self.earlier, self.errors, self.settings, self.item = earlier, errors, settings, item

    def __iter__(self) -> Iterator[Any]:
        frame = sys._getframe(1)
        if frame.f_code is not _COMPILE_BOOK.__code__:
            raise LawFailed(f"the directives were read by {frame.f_code.co_name}, not by compile_book's loop")
        yield from self.earlier
        errors, settings = frame.f_locals["errors"], frame.f_locals["settings"]
        errors[:], settings[:] = self.errors, self.settings
        yield self.item


_COMPILE_BOOK = m.compile_book  # the real function, kept while its callees are abstracted
_SETTING_KINDS = tuple(itertools.product((False, True), repeat=4))  # layer, target, directive equal; held differs
_SETTINGS_BEFORE: Finite[tuple[tuple[bool, ...], ...]] = Finite(
    "settings so far (none, one or two, each: its layer, target, directive equal to the rule's or not, its value differing or not)",
    ((), *((k,) for k in _SETTING_KINDS), *itertools.product(_SETTING_KINDS, repeat=2)),
)
_RULE_LAYERS = Finite("the rule's layer (each layer, or a name that is none)", (*m.LAYERS, "not a layer"))
_NO_PROBLEM, _OTHER_PROBLEM = "no problem", "another problem"
_CANONICAL_ANSWERS = Finite(
    "canonical's answers (a value; each kind of problem it gives, as itself; any other problem, a token)",
    (_NO_PROBLEM, m.UNKNOWN_DIRECTIVE, m.WRONG_TYPE, m.NO_OPERATION, m.UNORDERED, _OTHER_PROBLEM),
)


def _grown(before: list[Any], after: list[Any]) -> bool:
    """``after`` is ``before`` (the same objects, in order) with items appended."""
    return len(after) >= len(before) and all(a is b for a, b in zip(before, after))


def _same_error(got: Any, kind: Any, where: str) -> bool:
    """``got`` is QuirksError(kind, where): the kind the same object (a token) or an equal str."""
    return type(got) is m.QuirksError and (got.kind is kind or (isinstance(kind, str) and got.kind == kind)) and got.where == where


def _compile_step() -> Evidence:
    """One rule of one directive, from any state of the loop, exactly: the errors and the settings
    before are kept, and appended to, only as follows. A rule of no layer: UnknownLayer at
    layer/target, its directives unread. A directive canonical finds a problem in: that problem at
    layer/target/directive. A host-layer rule of a capabilities host naming a directive that is not
    capability-scoped: OutOfScope there. Else: a Clash there for each setting so far of the same
    layer, target and directive whose value differs (``!=``), and the setting (layer, target,
    directive, the canonical value) appended when the settings so far have none of that slot and
    directive. (A rule's further directives run the same body from the state its earlier ones
    reached: the step runs the directive first in its rule, and after another one of it, from any
    state.) The premise of the induction, that the loops over the rules and over a rule's
    directives carry no state but the errors and the settings, is checked on compile_book's
    source (``stateless_loop``: every other name is assigned in each iteration before it is read)."""
    for over in ("book.rules", "rule.directives"):
        stateless_loop(_COMPILE_BOOK, over, frozenset({"errors", "settings"}))

    def step(layer: str, second: bool, answer: str, caps: bool, scoped: bool, earlier_error: bool, before: tuple[tuple[bool, ...], ...]) -> bool:
        directive = "prompt_progress" if scoped else "the directive"
        target = "the target"
        where = f"{layer}/{target}/{directive}"
        errors_before: list[Any] = [m.QuirksError(_opaque("an earlier kind"), _opaque("an earlier place"))] if earlier_error else []
        settings_before: list[Any] = [
            (layer if le else "another layer", target if te else "another target", directive if de else "another directive", _Held(differs))
            for le, te, de, differs in before
        ]
        value = _opaque("the canonical value")
        problem = answer != _NO_PROBLEM
        # a kind canonical answers is given as itself (compile_book may single one out by identity,
        # which a token cannot show); the token stands for any other problem
        the_problem = _opaque("the problem") if answer == _OTHER_PROBLEM else answer
        outcome: list[bool] = []

        def canonical(d: Any, raw: Any) -> Any:
            if d == "an earlier directive":
                return (None, _opaque("the earlier one's problem"))
            if d != directive:
                raise LawFailed(f"canonical asked for {d!r}")
            return (None, the_problem) if problem else (value, None)

        def host_scope(hosts: Any, host_id: Any) -> Any:
            if host_id != target:
                raise LawFailed(f"host_scope asked for {host_id!r}")
            return m.CAPS if caps else m.WIRE

        def at_end(errors: list[Any], settings: list[Any]) -> None:
            if not (_grown(errors_before, errors) and _grown(settings_before, settings)):
                outcome.append(False)
                return
            new_errors, new_settings = errors[len(errors_before):], settings[len(settings_before):]
            want: list[tuple[Any, str]]
            if layer not in m.LAYERS:
                want, grows = [(m.BAD_LAYER, f"{layer}/{target}")], False
            elif problem:
                want, grows = [(the_problem, where)], False
            elif layer == m.HOST and caps and not scoped:
                want, grows = [(m.OUT_OF_SCOPE, where)], False
            else:
                same_slot = [k for k in before if k[0] and k[1] and k[2]]
                want, grows = [(m.CLASH, where) for k in same_slot if k[3]], not same_slot
            kept = len(new_errors) == len(want) and all(_same_error(e, kind, w) for e, (kind, w) in zip(new_errors, want))
            if grows:
                added = len(new_settings) == 1 and new_settings[0][:3] == (layer, target, directive) and new_settings[0][3] is value
            else:
                added = not new_settings
            outcome.append(kept and added)

        earlier = (("an earlier directive", _opaque("its raw value")),) if second else ()
        directives: Any = _DirectivesFrom(earlier, errors_before, settings_before, (directive, _opaque("the raw value")))
        if layer not in m.LAYERS:
            directives = _opaque("the directives of a rule of no layer")
        book = m.Book((), (), _RulesFrom(errors_before, settings_before, (m.Rule(layer, target, directives),), at_end))  # type: ignore[arg-type]
        with callees(m, canonical=canonical, host_scope=host_scope):
            try:
                _COMPILE_BOOK(book)
            except Rest:
                return outcome == [True]
        return False

    return exhaust(
        domain(_RULE_LAYERS, boolean("the directive follows another of its rule"), _CANONICAL_ANSWERS, boolean("the host's scope is capabilities"),
               boolean("the directive is capability-scoped"), boolean("an error before"), _SETTINGS_BEFORE),
        step, about=[_COMPILE_BOOK],
    )


def _compile_end() -> Evidence:
    """The loop over the rules done, from any state: compile_book returns _least of its errors (the
    same list, as the loop left it) when that is not None, else the compiled book."""

    def end(earlier_error: bool, settings_held: bool, least_found: bool) -> bool:
        errors_before: list[Any] = [m.QuirksError(_opaque("a kind"), _opaque("a place"))] if earlier_error else []
        settings_before: list[Any] = [(m.MODEL, "a target", "a directive", _opaque("a value"))] if settings_held else []
        least = _opaque("the least error")
        seen: list[Any] = []

        def _least(errors: Any) -> Any:
            seen.append(errors)
            return least if least_found else None

        rules = _RulesFrom(errors_before, settings_before, (), lambda e, s: None, stop=False)
        with callees(m, _least=_least):
            got = _COMPILE_BOOK(m.Book((), (), rules))  # type: ignore[arg-type]
        if rules.seen is None or len(seen) != 1 or seen[0] is not rules.seen[0] or not _grown(errors_before, seen[0]) or len(seen[0]) != len(errors_before):
            return False
        if least_found:
            return got is least
        return isinstance(got, m.Compiled) and list(got.settings) == settings_before

    return exhaust(domain(boolean("an error before"), boolean("a setting before"), boolean("_least answers an error")), end, about=[_COMPILE_BOOK])


class _OnlyIterated:
    """A list a loop may only iterate, in order: an index or its length (the first error of a list
    in the step's place need not be the state the loop reached) refuses the law."""

    def __init__(self, *items: Any) -> None:
        self.items = items

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __getitem__(self, index: object) -> Any:
        raise LawFailed(f"the loop read its list at {index!r}, not by iterating it")

    def __len__(self) -> int:
        raise LawFailed("the loop read its list's length, not by iterating it")


def _least_search() -> Evidence:
    """_least of a nonempty list is its first error of least key (never None): induction on the
    list, of _least. Base: the empty list gives None; one error gives it. Step: _least itself on two
    errors, their keys' comparison abstracted to each answer (the state after the first is the
    first; after any prefix, its first error of least key, an opaque token): the later one replaces
    it only when its key is below. The lists are ones _least may only iterate (``_OnlyIterated``):
    reading the list's first error, say, instead of the state, refuses."""
    real = m._least
    stateless_loop(real, "errors", frozenset({"best"}))  # the state after a prefix is best alone
    a, b = _opaque("error a"), _opaque("error b")

    class _Key:
        def __init__(self, below: bool) -> None:
            self.below = below

        def __lt__(self, other: object) -> bool:
            return self.below

    def base(size: int) -> bool:
        with callees(m, _error_key=lambda e: _Key(False)):
            got = real(_OnlyIterated(*[a][:size]))  # type: ignore[arg-type]
        return got is (a if size else None)

    def step(second_less: bool) -> bool:
        with callees(m, _error_key=lambda e: _Key(second_less and e is b)):
            got = real(_OnlyIterated(a, b))  # type: ignore[arg-type]
        return got is (b if second_less else a)

    return induction(exhaust(domain(Finite("lists of 0 or 1 error", (0, 1))), base, about=[real]),
                     exhaust(domain(boolean("the second's key is below the first's")), step, about=[real]),
                     of="bend.infer._least", label="the errors (_least keeps an error once it has one)")


def _unknown_is_none() -> Evidence:
    """value_type answers None for every name outside the table (one spy for them all), and
    canonical then answers UnknownDirective without reading the value."""

    def none(name: Any) -> bool:
        return m.value_type(name) is None

    def unknown(kind: None) -> bool:
        with callees(m, value_type=lambda d: kind):
            return m.canonical(_opaque("the name"), _opaque("the raw value")) == (None, m.UNKNOWN_DIRECTIVE)

    return all_of(
        exhaust(domain(Finite("names outside the table (a spy answering == False)", (_Unknown("a name outside the table"),))), none, about=[m.value_type]),
        exhaust(domain(Finite("value_type's answer for such a name", (None,))), unknown, about=[m.canonical]),
    )


def _compile_fold() -> Evidence:
    """compile_book's loop over the rules, by induction on them (``_compile_step`` from any state,
    ``_compile_end`` once they are done)."""
    return induction(_compile_end(), _compile_step(), of="bend.infer.compile_book", label="the rules folded into errors and settings (from any state, one rule of one directive)")


def _no_hosts_wire() -> Evidence:
    """host_scope with no hosts answers wire, reading nothing of the target (a token)."""
    return exhaust(domain(Finite("no hosts", ((),))), lambda hosts: m.host_scope(hosts, _opaque("the target")) == m.WIRE, about=[m.host_scope])


def _clash_compile_proof() -> Evidence:
    """Two rules of one layer and target giving a directive values whose canonical forms differ: no
    book holding them compiles. If either rule is refused (no layer, a problem in its value, out
    of a capabilities host's scope) the step appends an error. Else, when the later of the two runs,
    the settings hold the slot's first accepted value h (the step appends a slot's setting for its
    first accepted directive only, and keeps the settings); == on canonical values (bools, ints,
    strs, tuples of them) is an equivalence, so h differs from one of the two, and the step
    appended a Clash when that one ran. The errors are kept through every later rule, and
    compile_book returns _least of them, an error (``_compile_end``, ``_least_search``). Equal
    values: the book of the two rules (no family or host: host_scope answers wire) compiles: the
    first appends the setting and no error, the second finds it equal and appends nothing
    (``_compile_step``); _least of no error is None and compile_book returns the compiled book."""
    return all_of(_compile_fold(), _least_search(), _no_hosts_wire())


def _order_compile_proof() -> Evidence:
    """Swapping two rules keeps compile_book's outcome, for every book. By the step (``_compile_step``):
    a rule of no layer, a problem in a value and a value out of a capabilities host's scope each give
    one error whatever the state, the same error wherever the rule stands; a slot's accepted values
    give a Clash (at the slot's layer/target/directive, the same text for all of them) for each one
    after the first that differs from the first, so a Clash of the slot is there iff not all its
    accepted values are equal (== on canonical values is an equivalence), in any order; the families'
    and hosts' errors come before the rules and do not depend on them. So the set of errors is the
    same in any order: none (the book compiles) or the same ones, and _least answers the first of
    least key (``_least_search``), whose key (where, kind) names one error (``_key_names_error``):
    the same error."""
    return all_of(_compile_fold(), _least_search(), _key_names_error())


def _key_names_error() -> Evidence:
    """_error_key gives two errors equal keys only when they are one error (the same kind at the
    same place): every pair of kinds x places equal or not, the places words read by ``==`` alone."""

    def names(first: str, second: str, same_place: bool) -> bool:
        a = m.QuirksError(first, _word("a place"))
        b = m.QuirksError(second, _word("a place" if same_place else "another place"))
        return (m._error_key(a) == m._error_key(b)) == (first == second and same_place)

    kinds = Finite("kinds of error", m.ERROR_KINDS)
    return exhaust(domain(kinds, kinds, boolean("the places are equal")), names, about=[m._error_key])


def _unknown_compile_proof() -> Evidence:
    """A book any of whose rules names a directive outside the table (or has no layer) does not
    compile: value_type answers None for the name, so canonical answers UnknownDirective
    (``_unknown_is_none``); compile_book's step appends an error for it from any state, and keeps
    the errors before through every rule after (``_compile_step``, each rule and each directive
    from any state, so by induction on the rules the errors stay nonempty); then it returns _least
    of them (``_compile_end``), which is an error for a nonempty list (``_least_search``). Every
    directive of the table compiles: a rule of each layer naming it, with a value of its type,
    compiles (the real compile_book, every directive x every layer: a witness for each)."""
    step = _compile_fold()

    def known(name: str, layer: str) -> bool:
        value = VALID[oracle.DIRECTIVES[name]][0]
        return isinstance(m.compile_book(m.Book((), (), (m.Rule(layer, "t", ((name, value),)),))), m.Compiled)

    every = exhaust(domain(Finite("directives of the table", tuple(oracle.DIRECTIVES)), Finite("layers", m.LAYERS)), known, about=[m.compile_book])
    return all_of(_unknown_is_none(), step, _least_search(), every)


@law("quirk_unknown_rejected", "S6.1", "A rule naming a directive outside Directive::ALL does not compile; every directive of the table does.", PROVED)
def quirk_unknown_rejected() -> Evidence:
    """Proved of compile_book's code for every book (``_unknown_compile_proof``); beside it, the
    exact error for unknown names among valid rules, on the model and production (bounded), and
    names from Hypothesis (tested)."""
    def rejected(compile_: Any, case: tuple[str, str, int]) -> bool:
        name, layer, at = case
        rules = list(VALID_RULES)
        rules.insert(at, m.Rule(layer, "t", ((name, True),)))
        return bool(compile_(tuple(rules)) == f"QuirksError::UnknownDirective({layer}/t/{name})")

    def known(compile_: Any, case: tuple[str, str]) -> bool:
        name, layer = case
        value = VALID[oracle.DIRECTIVES[name]][0]
        return bool(compile_((m.Rule(layer, "t", ((name, value),)),)) == "ok")

    names = [n for n in UNKNOWN_NAMES if n not in oracle.DIRECTIVES]
    table = _both(rejected, itertools.product(names, m.LAYERS, range(3)), f"{len(names)} unknown names x 3 layers x 3 positions among valid rules")
    every = _both(known, itertools.product(oracle.DIRECTIVES, m.LAYERS), f"each of the {len(oracle.DIRECTIVES)} directives of the table x 3 layers compiles")

    def hunted(name: str) -> bool:
        rule = (m.Rule(m.MODEL, "t", ((name, True),)),)
        return name in oracle.DIRECTIVES or (_model_compile(rule).startswith("QuirksError::UnknownDirective") and _production_compile(rule).startswith("QuirksError::UnknownDirective"))

    return also(_unknown_compile_proof(), all_of(table, every), examples(hunted, name=st.text(max_size=30)))


def _valid_values(name: str) -> list[Any]:
    return [v for v in VALID[oracle.DIRECTIVES[name]] if _model_compile((m.Rule(m.MODEL, "t", ((name, v),)),)) == "ok"]


@law("quirk_clash_rejected", "S6.1", "Two rules of one layer and target giving a directive different values do not compile; equal values do.", PROVED)
def quirk_clash_rejected() -> Evidence:
    """Proved of compile_book's code for every book (``_clash_compile_proof``); beside it, every
    directive x every ordered pair of its valid pool values x 3 layers on the model and production
    (bounded)."""

    def cases() -> Iterator[tuple[str, Any, Any, str]]:
        for name in oracle.DIRECTIVES:
            for a, b in itertools.product(_valid_values(name), repeat=2):
                for layer in m.LAYERS:
                    yield name, a, b, layer

    def prop(compile_: Any, case: tuple[str, Any, Any, str]) -> bool:
        name, a, b, layer = case
        same_target = compile_((m.Rule(layer, "t", ((name, a),)), m.Rule(layer, "t", ((name, b),))))
        other_target = compile_((m.Rule(layer, "t", ((name, a),)), m.Rule(layer, "u", ((name, b),))))
        differ = a != b or type(a) is not type(b)
        want = f"QuirksError::Clash({layer}/t/{name})" if differ else "ok"
        return bool(same_target == want and other_target == "ok")

    return also(_clash_compile_proof(), _both(prop, cases(), "every directive of the table x every ordered pair of its valid pool values x 3 layers"))


CAPS_HOST = (m.Host("c", provider="pc", scope=m.CAPS),)
RULE_POOL: tuple[m.Rule, ...] = (
    m.Rule(m.MODEL, "m", (("adaptive_thinking", True),)),
    m.Rule(m.MODEL, "m", (("adaptive_thinking", False),)),
    m.Rule(m.MODEL, "m", (("strict_cap", -1),)),
    m.Rule(m.FAMILY, "f", (("bogus", 1),)),
    m.Rule(m.HOST, "c", (("adaptive_thinking", True),)),
    m.Rule(m.HOST, "c", (("count_tokens", "ollama"),)),
    m.Rule(m.FAMILY, "f", (("thinking_budgets", [3, 2, 1, 0]),)),
    m.Rule(m.MODEL, "n", (("max_tokens_field", "x"),)),
)


@law("quirk_compile_order_free", "S6.1", "Swapping two rules keeps the compile outcome (the same error, or success).", PROVED)
def quirk_compile_order_free() -> Evidence:
    """Proved of compile_book's code for every book (``_order_compile_proof``); beside it, every rule
    list of length 0..4 over 8 rules x every swap, on the model and production (bounded)."""

    def lists() -> Iterator[tuple[m.Rule, ...]]:
        for n in range(5):
            yield from itertools.product(RULE_POOL, repeat=n)

    def prop(compile_: Any, rules: tuple[m.Rule, ...]) -> bool:
        first = compile_(rules, CAPS_HOST)
        for i, j in itertools.combinations(range(len(rules)), 2):
            swapped = list(rules)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            if compile_(tuple(swapped), CAPS_HOST) != first:
                return False
        return True

    return also(_order_compile_proof(), _both(prop, lists(), "rule lists of length 0..4 over 8 rules (valid, clashing, each error kind) x every swap"))


# -- the thinking ladder (S6.9) -------------------------------------------------------------------------

WIRE = "wire-value"
ENTRY_CHOICES: tuple[tuple[bool, str | None], ...] = ((False, None), (True, None), (True, WIRE))
MAPS: tuple[m.LevelMap, ...] = tuple(
    tuple((level, value) for level, (present, value) in zip(m.LEVELS, choice) if present)
    for choice in itertools.product(ENTRY_CHOICES, repeat=len(m.LEVELS))
)
SUBSETS: tuple[tuple[str, ...], ...] = tuple(
    tuple(level for level, keep in zip(m.LEVELS, mask) if keep) for mask in itertools.product((False, True), repeat=len(m.LEVELS))
)
SOME_DEFAULTS: tuple[tuple[str, ...], ...] = (
    oracle.DEFAULT_REASONING,
    oracle.LADDER,
    *(tuple(level for level, keep in zip(("off", "low", "high", "max"), mask) if keep) for mask in itertools.product((False, True), repeat=4)),
)
RULE_LADDERS: tuple[m.LevelMap | None, ...] = (None, (), (("off", "none"), ("xhigh", "xhigh")), (("minimal", None),))


def _as_dict(level_map: m.LevelMap) -> dict[str, str | None]:
    return dict(level_map)


@cache
def _shipped() -> quirks.Rulebook:
    return quirks.shipped()


def _qwen38() -> quirks.ModelKey:
    return quirks.ModelKey("qwen3.8-27b", provider="my-llama", api="openai-completions", base_url="http://127.0.0.1:8080/v1")


_CHOSEN_LADDER = generated(m.chosen_ladder)  # from the model's code (spec.z3gen)


def _ladder_proof(premise: Callable[[Any, Any], Any], chosen: Callable[[Any, Any], Any], what: str) -> Evidence:
    """chosen_ladder(explicit, rule) is ``chosen`` of the two maps (the same items: length and
    every entry's level and wire string) wherever ``premise`` holds, for every pair of maps."""
    explicit, rule = fresh(m.LevelMap | None, "explicit"), fresh(m.LevelMap | None, "rule")

    def claim() -> Any:
        return z3.Implies(premise(explicit, rule), same_items(_CHOSEN_LADDER(explicit, rule), chosen(explicit, rule)))

    return prove(claim, label=f"{what}, for every explicit map and rulebook ladder (None or any level map)", assumptions=[*facts(explicit.value), *facts(rule.value)], ties=[_CHOSEN_LADDER.tie])


@law("quirk_ladder_explicit_first", "S6.9", "An explicit thinkingLevelMap beats the rulebook ladder.", PROVED)
def quirk_ladder_explicit_first() -> Evidence:
    proof = _ladder_proof(lambda explicit, rule: z3.Not(explicit.none), lambda explicit, rule: explicit.value, "an explicit map is the ladder")
    model = bounded(
        itertools.product(MAPS, RULE_LADDERS),
        lambda c: m.chosen_ladder(c[0], c[1]) == c[0],
        label=f"{len(MAPS):,} explicit maps x {len(RULE_LADDERS)} rulebook ladders (none, empty, two others)",
    )
    book = _shipped()
    prod = bounded(
        MAPS,
        lambda lm: (lambda got: got.entries == lm and got.source == "explicit")(ladder.ladder(book, _qwen38(), True, _as_dict(lm))),
        label=f"production: qwen3.8-27b (a family with a rulebook ladder) x {len(MAPS):,} explicit maps",
    )
    return also(proof, model).with_production(prod)


@law("quirk_ladder_rule_second", "S6.9", "With no explicit map the rulebook ladder is chosen.", PROVED)
def quirk_ladder_rule_second() -> Evidence:
    proof = _ladder_proof(lambda explicit, rule: z3.And(explicit.none, z3.Not(rule.none)), lambda explicit, rule: rule.value, "no explicit map: the rulebook ladder")
    model = bounded(MAPS, lambda lm: m.chosen_ladder(None, lm) == lm, label=f"{len(MAPS):,} rulebook ladders, no explicit map")

    def production(level_map: m.LevelMap) -> bool:
        book = quirks.compile_rulebook([], [], [quirks.RuleDef("model", "x", (("thinking_ladder", _as_dict(level_map)),))], {"thinking_defaults": {"reasoning": list(oracle.DEFAULT_REASONING), "plain": ["off"]}})
        got = ladder.ladder(book, quirks.ModelKey("x"), True, None)
        return got.entries == level_map and got.source == "rulebook"

    return also(proof, model).with_production(bounded(MAPS, production, label=f"production: {len(MAPS):,} ladders as model rules, no explicit map"))


@law("quirk_ladder_default_last", "S6.9", "Neither an explicit map nor a rulebook ladder: no entries, and the default ladder gives every level.", PROVED)
def quirk_ladder_default_last() -> Evidence:
    space: Domain = domain(Finite("reasoning default ladders", SUBSETS), Finite("plain default ladders", SUBSETS), Finite("reasoning", (False, True)))

    def prop(reasoning_default: tuple[str, ...], plain: tuple[str, ...], reasoning: bool) -> bool:
        chosen = m.chosen_ladder(None, None)
        want = reasoning_default if reasoning else plain
        return chosen == () and m.offered(reasoning, chosen, m.ThinkingDefaults(reasoning_default, plain)) == want

    model = exhaust(space, prop)
    book = quirks.compile_rulebook([], [], [], {"thinking_defaults": {"reasoning": list(oracle.DEFAULT_REASONING), "plain": list(oracle.DEFAULT_PLAIN)}})
    prod = bounded(
        [False, True],
        lambda r: (lambda got: got.entries == () and got.source == "none" and got.offered == (oracle.DEFAULT_REASONING if r else oracle.DEFAULT_PLAIN))(ladder.ladder(book, quirks.ModelKey("x"), r, None)),
        label="production: no map, no rule, the seed's defaults, with and without reasoning",
    )
    return model.with_production(prod)


def _offered_exact(lm: m.LevelMap, defaults: tuple[str, ...]) -> bool:
    got = m.offered(True, lm, m.ThinkingDefaults(defaults, oracle.DEFAULT_PLAIN))
    for level in oracle.LADDER:
        entry = dict(lm).get(level, "missing")
        want = entry not in ("missing", None) or (entry == "missing" and level in defaults)
        if (level in got) != want:
            return False
    return list(got) == [x for x in oracle.LADDER if x in got]


# The proofs of offered (spec.z3gen: its loop over LEVELS, a module constant of 7 levels, and
# entry_of's loop over the level map, which an induction covers). Judges state the seed's rule
# on the map itself: "the map has an entry for the level" is Python's ``in`` on its levels
# (``member``, from an index: ``_named``), never through entry_of.
_ENTRY_OF, _OFFERED = generated(m.entry_of), generated(m.offered)
_MAP, _DEFAULTS = fresh(m.LevelMap, "map"), fresh(m.ThinkingDefaults, "defaults")
_LEVEL, _AT, _K = z3.String("level"), z3.Int("at"), z3.Int("k")
_LADDER_INPUTS = [*facts(_MAP), *facts(_DEFAULTS)]
_LADDER_TIES = [_ENTRY_OF.tie, _OFFERED.tie]


def _name(k: Any) -> Any:
    return item(_MAP, k).item0


def _named(level: Any, start: Any, end: Any) -> Any:
    """Some entry of map[start:end] names ``level``: Python's ``level in`` the map's levels
    (``member``'s recursive function, entered at index ``start`` of the levels cut at ``end``)."""
    found = member(Items(_MAP.array.item0, end), level)
    return found.decl()(*found.children()[:-1], start)


def _entry_is(level: Any, start: Any, got: Any) -> Any:
    """``got`` (a pair: present, and the value) is the entry for ``level`` of map[start:]: the
    first entry k from ``start`` that names it (for the free k), absent if none does."""
    first_at_k = z3.And(start <= _K, _K < _MAP.length, _name(_K) == level, z3.Not(_named(level, start, _K)))
    return z3.And(
        z3.Implies(first_at_k, z3.And(got.item0, same_terms(got.item1, item(_MAP, _K).item1))),
        z3.Implies(z3.Not(_named(level, start, _MAP.length)), z3.And(z3.Not(got.item0), got.item1.none)),
    )


def _entry_holds(at: dict[str, Any]) -> Any:
    return z3.Implies(at["_index"] >= 0, _entry_is(at["level"], at["_index"], _ENTRY_OF.loop(**at)))


@cache
def entry_of_lemma() -> Evidence:
    """entry_of's loop, entered at any index i of any level map for any level, returns the first
    entry from i that names the level, or (False, None): induction on its loop (z3 proved it
    ends), the step's hypothesis at the states its body runs it again with."""
    state = {"ladder": _MAP, "level": _LEVEL, "_index": _AT}
    test = _AT < _MAP.length
    base = prove(lambda: z3.Implies(z3.Not(test), _entry_holds(state)), label="base: the map is walked (no entry from its end)", assumptions=_LADDER_INPUTS, ties=_LADDER_TIES)
    step = prove(
        lambda: z3.Implies(z3.And(test, *(_entry_holds(after) for _path, after in _ENTRY_OF.successors(**state))), _entry_holds(state)),
        label="step: map[i] is the entry when it names the level, else the entry after it", assumptions=_LADDER_INPUTS, ties=_LADDER_TIES,
    )
    return induction(base, step, of=_ENTRY_OF.of, label=f"{_ENTRY_OF.of}'s walk over the level map (the first entry naming the level)")


def _offered_level(level: str) -> Evidence:
    """For a reasoning model, every level map and both default ladders: if the map's only entry
    for ``level`` is entry k (a map names a level once), ``level`` is offered iff that entry is
    a wire string; if the map has no entry for it, iff the default ladder lists it. Given
    entry_of's fact at the state offered's call of it enters its loop with."""
    wanted = z3.StringVal(level)

    def claim() -> Any:
        got = _OFFERED(z3.BoolVal(True), _MAP, _DEFAULTS)
        only_at_k = z3.And(0 <= _K, _K < _MAP.length, _name(_K) == wanted, z3.Not(_named(wanted, 0, _K)), z3.Not(_named(wanted, _K + 1, _MAP.length)))
        return z3.Implies(
            _entry_holds(_ENTRY_OF.entered(_MAP, wanted)),
            z3.And(
                z3.Implies(only_at_k, member(got, wanted) == z3.Not(item(_MAP, _K).item1.none)),
                z3.Implies(z3.Not(_named(wanted, 0, _MAP.length)), member(got, wanted) == member(_DEFAULTS.reasoning, wanted)),
            ),
        )

    return prove(claim, label=f"{level}: offered iff its one entry is a wire string, or it has none and the default lists it, for every map and defaults", assumptions=_LADDER_INPUTS, ties=_LADDER_TIES)


@law("quirk_ladder_offered_exact", "S6.9", "A reasoning model offers a level iff its ladder gives a wire string, or has no entry and the default lists it.", PROVED)
def quirk_ladder_offered_exact() -> Evidence:
    proof = all_of(entry_of_lemma(), *(_offered_level(level) for level in oracle.LADDER))
    model = bounded(
        itertools.product(MAPS, SOME_DEFAULTS),
        lambda c: _offered_exact(*c),
        label=f"{len(MAPS):,} ladders x {len(SOME_DEFAULTS)} default ladders (the shipped one, all levels, every subset of off/low/high/max) x 7 levels",
    )
    book = _shipped()
    prod = bounded(
        MAPS,
        lambda lm: _offered_exact(lm, oracle.DEFAULT_REASONING) and ladder.ladder(book, _qwen38(), True, _as_dict(lm)).offered == m.offered(True, lm, m.ThinkingDefaults(oracle.DEFAULT_REASONING, oracle.DEFAULT_PLAIN)),
        label=f"production with the shipped defaults: {len(MAPS):,} explicit ladders",
    )
    return also(proof, model).with_production(prod)


def _rank(level: Any) -> Any:
    """The level's place on the seed's ladder (oracle.LADDER), 7 for a string not on it."""
    out: Any = z3.IntVal(len(oracle.LADDER))
    for place, name in reversed(list(enumerate(oracle.LADDER))):
        out = z3.If(level == z3.StringVal(name), place, out)
    return out


def _plain_of_length(size: int) -> Evidence:
    """Without reasoning, for every map and both default ladders whose plain default is ``size``
    levels of the seed's ladder in its order, the offered levels are the plain default."""

    def claim() -> Any:
        got, plain = _OFFERED(z3.BoolVal(False), _MAP, _DEFAULTS), _DEFAULTS.plain
        ranks = [_rank(item(plain, k)) for k in range(size)]
        ordered = z3.And(plain.length == size, *(r < len(oracle.LADDER) for r in ranks), *(a < b for a, b in zip(ranks, ranks[1:])))
        return z3.Implies(ordered, z3.And(got.length == size, *(item(got, k) == item(plain, k) for k in range(size))))

    return prove(claim, label=f"a plain default of {size} levels in ladder order is what is offered, for every map", assumptions=_LADDER_INPUTS, ties=[_OFFERED.tie])


@law("quirk_ladder_plain_exact", "S6.9", "A model without reasoning offers exactly the plain default, whatever its ladder.", PROVED)
def quirk_ladder_plain_exact() -> Evidence:
    # A default ladder is a subset of the 7 levels in ladder order (S6.9), so of length 0..7: the
    # eight proofs cover every one.
    proof = all_of(*(_plain_of_length(size) for size in range(len(oracle.LADDER) + 1)))
    model = bounded(
        itertools.product(MAPS, SOME_DEFAULTS),
        lambda c: m.offered(False, c[0], m.ThinkingDefaults(oracle.DEFAULT_REASONING, c[1])) == c[1],
        label=f"{len(MAPS):,} ladders x {len(SOME_DEFAULTS)} plain defaults",
    )
    book = _shipped()
    prod = bounded(MAPS, lambda lm: ladder.ladder(book, _qwen38(), False, _as_dict(lm)).offered == oracle.DEFAULT_PLAIN, label=f"production, shipped defaults: {len(MAPS):,} ladders")
    return also(proof, model).with_production(prod)


@law(
    "quirk_ladder_shipped_is_s10",
    "S6.9",
    "With the shipped defaults the offered levels are S10's ladder of the chosen map, so the S10 laws hold; the shipped family ladders offer what the seed says.",
    PROVED,
)
def quirk_ladder_shipped_is_s10() -> Evidence:
    """Proved over a whole finite domain: the shipped defaults are one value (the shipped file,
    compiled by production, checked equal to the seed's), and a map is one entry per level of 3
    shapes (missing, null, a wire string) whose wire strings are opaque tokens no rule may read
    (spec.laws.effort: the 3^7 shapes x reasoning are the whole type of models, by
    parametricity), so bend.infer.offered with the shipped defaults and bend.effort.offered are
    compared at every model."""
    book = _shipped()
    shipped = ladder.thinking_defaults(book)
    if shipped != m.ThinkingDefaults(oracle.DEFAULT_REASONING, oracle.DEFAULT_PLAIN):
        raise LawFailed(f"shipped thinking_defaults {shipped} differ from the seed's (off to high; plain off)")
    if (s10.DEFAULT_LADDER, s10.PLAIN_DEFAULT) != (oracle.DEFAULT_REASONING, oracle.DEFAULT_PLAIN):
        raise LawFailed("the S10 model's default ladders differ from the seed's")
    from spec.laws import effort as shapes  # the whole type of models: 3^7 entry shapes with opaque wire strings, x reasoning

    def agrees(*point: Any) -> bool:
        level_map, reasoning = shapes._model_map(shapes._shapes(point[:-1])), point[-1]
        return m.offered(reasoning, level_map, shipped) == s10.offered(s10.Model(reasoning, level_map))

    found = exhaust(domain(*shapes.SHAPE_FACTORS, shapes.REASONING), agrees, about=[m.offered, s10.offered])
    same = found.reworded(f"offered with the shipped defaults = S10 offered at every model (the effort laws hold of it): {found.sentence}")

    def family_offers(fam: str) -> bool:
        key = quirks.ModelKey({"qwen-3.8": "qwen3.8-27b", "qwen": "qwen3-8b", "grok-4.3": "grok-4.3", "grok-4.5": "grok-4.5", "grok-4.6": "grok-4.7"}[fam], provider="custom")
        got = ladder.ladder(book, key, True, None)
        wire_ok = all(got.wire(level) == value for level, value in oracle.FAMILY_WIRE.get(fam, {}).items())
        return book.family(key.id).id == fam and got.source == "rulebook" and got.offered == oracle.FAMILY_OFFERS[fam] and wire_ok

    families = bounded(oracle.FAMILY_OFFERS, family_offers, label="production: every shipped family ladder of S6.9 offers the seed's levels")
    return same.with_production(families).with_production(_wire_ladder())


# S6.9 on the wire: a custom provider's qwen3.8-27b and qwen3-8b (openai-completions, llama.cpp's
# server) asked for each level their ladder offers. qwen-3.8's off is the wire string none; qwen's
# off is the template toggle (chat_template_kwargs enable_thinking false, no effort sent); every
# other level goes as its name (the seed lists the levels as the wire values). Read off the body
# the loopback server received.
def _wire_ladder() -> Evidence:
    ids = {"qwen-3.8": "qwen3.8-27b", "qwen": "qwen3-8b"}
    cases = [(fam, level) for fam in ids for level in oracle.FAMILY_OFFERS[fam]]
    batch: list[tuple[WireModel, WireRequest, lb.Script | tuple[lb.Script, ...]]] = [
        (_wire_model(oracle.API_CHAT, id=ids[fam], provider="my-llama", reasoning=True), WireRequest((WireMessage("user", "go"),), thinking=level), lb.Stream([lb.Text("ok")]))
        for fam, level in cases
    ]
    sent = _wire_exchange(batch)

    def ok(i: int) -> bool:
        fam, level = cases[i]
        body = sent[i][0].body
        if fam == "qwen" and level == "off":
            return body.get("chat_template_kwargs") == {"enable_thinking": False} and "reasoning_effort" not in body
        return body.get("reasoning_effort") == oracle.FAMILY_WIRE.get(fam, {}).get(level, level) and "chat_template_kwargs" not in body

    return bounded(range(len(cases)), ok, label="openai-completions over loopback: qwen3.8-27b and qwen3-8b at every level their ladders offer")


# -- the forced tool call (S6.3) ------------------------------------------------------------------------

AGREE = 64
Z3_AGREE = 16


# The encodings of the forced call's steps are generated from the model's code (spec.z3gen): a
# proof over them is a proof about bend.infer.flag and bend.infer.after for every input.
_z3_flag = generated(m.flag)
_z3_after = generated(m.after)
CALLED_CODE, RETRY_CODE, NOT_CALLED_CODE = z3.StringVal(m.CALLED), z3.StringVal(m.RETRY), z3.StringVal(m.NOT_CALLED)


@law("infer_force_flag_exact", "S6.3", "The compiled step flags attempt 0 iff supported and free, a retry iff supported.", PROVED)
def infer_force_flag_exact() -> Evidence:
    """The seed's two sentences, each as its own implication, proved of bend.infer.flag for every
    natural attempt: its encoding is generated from its code (spec.z3gen)."""
    a, s, f = z3.Int("attempt"), z3.Bool("supported"), z3.Bool("free")

    def claim() -> Any:
        flagged = _z3_flag(a, s, f)
        first = z3.Implies(a == 0, flagged == z3.And(s, f))  # attempt 0 flags iff supported and free
        retry = z3.Implies(a >= 1, flagged == s)  # a retry flags iff supported
        return z3.And(first, retry)

    proof = prove(claim, label="every natural attempt, supported, free: attempt 0 flags iff supported and free, a retry iff supported", assumptions=[a >= 0], ties=[_z3_flag.tie])
    oracle_agrees = bounded(itertools.product(range(AGREE + 1), (False, True), (False, True)), lambda c: m.flag(*c) == oracle.flag_says(*c), label=f"flag = the oracle for attempts 0..{AGREE}")
    prod = bounded(
        itertools.product(range(AGREE + 1), (False, True), (False, True)),
        lambda c: force.run("t", c[0], c[1], c[2], lambda r: r.attempt == c[0]).requests[-1].forced_choice == oracle.flag_says(*c),
        label=f"production: the flag of attempt i (0..{AGREE}) of a forced call",
    )
    return also(proof, oracle_agrees).with_production(prod)


@law("infer_force_after_exact", "S6.3", "The compiled step after attempt i: a call ends it; a miss retries iff i + 1 <= retries, else fails.", PROVED)
def infer_force_after_exact() -> Evidence:
    """The seed's three clauses, each its own implication, proved of bend.infer.after for every
    natural attempt and retry count: its encoding is generated from its code (spec.z3gen)."""
    a, r, c = z3.Int("attempt"), z3.Int("retries"), z3.Bool("called")

    def claim() -> Any:  # the seed's words, read literally
        step = _z3_after(a, r, c)
        ends = z3.Implies(c, step == CALLED_CODE)  # a call ends it
        retries = z3.Implies(z3.Not(c), (step == RETRY_CODE) == (a + 1 <= r))  # a miss on attempt i retries iff i + 1 <= retries
        fails = z3.Implies(z3.And(z3.Not(c), step != RETRY_CODE), step == NOT_CALLED_CODE)  # else fails
        return z3.And(ends, retries, fails)

    proof = prove(claim, label="every natural attempt and retry count: a call ends it; a miss retries iff i + 1 <= retries, else fails", assumptions=[a >= 0, r >= 0], ties=[_z3_after.tie])
    oracle_agrees = bounded(
        itertools.product(range(AGREE + 1), range(AGREE + 1), (False, True)),
        lambda x: m.after(*x) == oracle.after_says(*x),
        label=f"after = the oracle for attempts and retries 0..{AGREE}",
    )

    def production_step(case: tuple[int, int, bool]) -> bool:
        attempt, retries, called = case
        if attempt > retries:
            return True  # production never reaches an attempt past its retries (force_bounded)
        made = _production_run(retries, True, True, tuple([False] * attempt + [called]))
        step = oracle.after_says(attempt, retries, called)
        if step == "retry":
            return len(made.flags) > attempt + 1 or made.outcome == m.NOT_CALLED
        return len(made.flags) == attempt + 1 and made.outcome == step

    prod = bounded(
        itertools.product(range(17), range(17), (False, True)),
        production_step,
        label="production: the step after attempt i (0..16) of a forced call with retries 0..16, called or not",
    )
    return also(proof, oracle_agrees).with_production(prod)


REPLIES: tuple[tuple[bool, ...], ...] = tuple(r for n in range(8) for r in itertools.product((False, True), repeat=n))
RUNS = "retries 0..6 x supported x free x every reply list of length 0..7"


def _runs() -> Iterator[tuple[int, bool, bool, tuple[bool, ...]]]:
    for retries, supported, free, replies in itertools.product(range(7), (False, True), (False, True), REPLIES):
        yield retries, supported, free, replies


def _production_run(retries: int, supported: bool, free: bool, replies: tuple[bool, ...]) -> m.Forced:
    sent: list[bool] = []

    def send(request: force.ForcedRequest) -> bool:
        sent.append(request.forced_choice)
        return replies[request.attempt] if request.attempt < len(replies) else False

    try:
        force.run("tool", retries, supported, free, send)
    except force.ForcedToolError:
        return m.Forced(tuple(sent), m.NOT_CALLED)
    return m.Forced(tuple(sent), m.CALLED)


def _force_law(prop: Any, label: str) -> Evidence:
    model = bounded(_runs(), lambda c: prop(c, m.force(*c)), label=f"{RUNS} ({label})")
    prod = bounded(_runs(), lambda c: prop(c, _production_run(*c)), label=f"production eukhe.inference.force.run: {RUNS}")
    hunt = examples(
        lambda retries, supported, free, replies: prop((retries, supported, free, tuple(replies)), m.force(retries, supported, free, tuple(replies))),
        retries=st.integers(0, 40),
        supported=st.booleans(),
        free=st.booleans(),
        replies=st.lists(st.booleans(), max_size=48),
    )
    return also(model, hunt).with_production(prod).with_production(_wire_force(prop))


# The forced call over the real wire: force.run drives each built API's client against the loopback
# server (and Anthropic and Claude on Bedrock with manual extended thinking, where S6.3 says native
# choice is unsupported); each attempt's flag is read from the body the server received, in the
# API's own form (spec.oracles.infer: forced_says; Mistral names no tool in its choice, so its flag
# is a forcing tool_choice with the tool offered), the soft prompt must name the tool in the
# request's last user turn, both tools are offered with their descriptions (one has none: Bedrock's
# form leaves it out, as the API refuses an empty one), and whether the model called the tool is
# read from the reply the client decoded.
WIRE_VARIANTS: tuple[tuple[str, bool], ...] = tuple((api, False) for api in WIRE_APIS) + tuple((api, True) for api in WIRE_APIS if api in oracle.MANUAL_THINKING_REJECTS)
WIRE_RUNS = (
    f"the {len(WIRE_APIS)} wire APIs over loopback (and {', '.join(api for api, manual in WIRE_VARIANTS if manual)} with manual thinking)"
    " x retries 0..2 x free x every reply list of length 0..3 (after each of 3 conversations in turn: a lone user turn,"
    " a tool loop ending in results, reasoning blocks and odd calls before a user turn)"
)


def _wire_force_cases() -> Iterator[tuple[str, bool, int, bool, tuple[bool, ...]]]:
    for (api, manual), retries, free, n in itertools.product(WIRE_VARIANTS, range(3), (False, True), range(4)):
        for replies in itertools.product((False, True), repeat=n):
            yield api, manual, retries, free, replies


# The conversation a forced turn ends (S6.3: *each* request ends with the soft prompt, whatever came
# before), one of these in turn: a lone user turn; a tool loop (a cached system prompt, user text
# pieces with cache marks and an image, an assistant's text, signed thinking and a call, its result
# with an image and a failed one) that ends in tool results, so the soft prompt is a turn of its own;
# and a user turn after an assistant's reasoning blocks (a redacted one, a Responses item) and calls
# whose arguments are not JSON, empty, or signed (Gemini's thoughtSignature). Images go to a model
# that takes them; a text-only model gets a note instead. No text of a history names the forced tool.
_PNG = WireImage("image/png", b"\x89PNG\r\n\x1a\n")
FORCE_HISTORIES: tuple[tuple[str, tuple[WireMessage, ...]], ...] = (
    ("", (WireMessage("user", "go on"),)),
    (
        "be brief",
        (
            WireMessage("user", parts=(("go on, ", True), ("ünï", False)), images=(_PNG,)),
            WireMessage("assistant", "looking", tool_calls=(WireCall(0, "c1", "edit", '{"path": "a"}'),), thinking="hmm", signature="sig-1"),
            WireMessage("tool", "done", tool_call_id="c1", tool_name="edit", images=(_PNG,), cache=True),
            WireMessage("tool", "no such file", tool_call_id="c2", tool_name="edit", is_error=True),
        ),
    ),
    (
        "",
        (
            WireMessage("user", "go on", cache=True),
            WireMessage(
                "assistant",
                "",
                tool_calls=(WireCall(0, "c3", "edit", "{not json"), WireCall(1, "c4", "edit", "", signature="gs")),
                thoughts=(WireThought("", "cmVkYWN0ZWQ=", redacted=True), WireThought("weighed it", "enc", item="rs_1")),
            ),
            WireMessage("tool", "", tool_call_id="c3", tool_name="edit"),
            WireMessage("tool", "[]", tool_call_id="c4", tool_name="edit"),
            WireMessage("user", "go on"),
        ),
    ),
)


# Each API's requests go in turn with its other ways to name the endpoint and sign in (the body and
# the forced call must not depend on them): Azure's deployment, API version and Entra bearer token;
# the Codex backend's JWT access token naming a ChatGPT account; Vertex's project and location as
# compat settings under a bare /v1 root; Bedrock signed with SigV4 from AWS credentials (no key),
# its signature judged by botocore's own signer over the bytes the server received.
AWS_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "AKIDLAWS", "AWS_SECRET_ACCESS_KEY": "law-secret", "AWS_SESSION_TOKEN": "law-token", "AWS_REGION": "eu-west-3"}
AWS_SIGN_IN = ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")  # every way the environment signs in to Bedrock
_JWT = ".".join(
    base64.urlsafe_b64encode(part).decode("ascii").rstrip("=")
    for part in (b'{"alg":"none"}', b'{"https://api.openai.com/auth": {"chatgpt_account_id": "acct-law"}}', b"sig")
)


# A second form of each, in turn with the first: Azure's resource named by AZURE_OPENAI_RESOURCE_NAME
# in a {resource} base URL; a Codex token that is no JWT of an account (no account header);
# Vertex's project and location from GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (global) under a
# {location}- base URL.
_NOT_JWT = "hdr." + base64.urlsafe_b64encode(b"not json").decode("ascii").rstrip("=") + ".sig"


def _wire_sign_in(api: str, second: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
    """The WireModel fields and environment of an API's other sign-in (AWS_CREDENTIALS: SigV4)."""
    if second and api == oracle.API_AZURE:
        return {"base_url": _wire_server().url + "/{resource}/openai/v1"}, {"AZURE_OPENAI_RESOURCE_NAME": "res-law"}
    if second and api == oracle.API_CODEX:
        return {"api_key": _NOT_JWT}, {}
    if second and api == oracle.API_VERTEX:
        return {"base_url": _wire_server().url + "/{location}-vertex/v1"}, {"GOOGLE_CLOUD_PROJECT": lb.VERTEX_PROJECT, "GOOGLE_CLOUD_LOCATION": "global"}
    if api == oracle.API_AZURE:
        return {"compat": {"azureDeployment": "dep-law", "azureApiVersion": "2025-04-01-preview", "azureAuth": "bearer"}}, {}
    if api == oracle.API_CODEX:
        return {"api_key": _JWT}, {}
    if api == oracle.API_VERTEX:
        return {"base_url": _wire_server().url + "/v1", "compat": {"vertexProject": lb.VERTEX_PROJECT, "vertexLocation": lb.VERTEX_LOCATION}}, {}
    if api == oracle.API_BEDROCK:
        return {"api_key": ""}, AWS_CREDENTIALS
    return {}, {}


@contextmanager
def _environment(values: dict[str, str], unset: Sequence[str] = ()) -> Iterator[None]:
    """os.environ with ``values`` set and ``unset`` unset (and AWS_BEARER_TOKEN_BEDROCK unset when
    they sign in to AWS)."""
    drop = (*unset, *(("AWS_BEARER_TOKEN_BEDROCK", "AWS_DEFAULT_REGION") if values else ()))
    saved = {name: os.environ.get(name) for name in (*values, *drop)}
    try:
        for name in drop:
            os.environ.pop(name, None)
        os.environ.update(values)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _sigv4_says(recorded: lb.Recorded) -> bool:
    """Whether the request carries a SigV4 signature of its received bytes by AWS_CREDENTIALS for
    service bedrock in their region, as botocore's signer computes it (its own canonical request)."""
    from botocore.auth import SigV4Auth  # type: ignore[import-untyped]  # the vendor SDK judges (no stubs)
    from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
    from botocore.credentials import Credentials  # type: ignore[import-untyped]

    said = recorded.headers.get("authorization", "")
    fields = dict(part.strip().split("=", 1) for part in said.removeprefix("AWS4-HMAC-SHA256 ").split(",") if "=" in part)
    names = fields.get("SignedHeaders", "").split(";")
    scope = fields.get("Credential", "").split("/")
    if not said.startswith("AWS4-HMAC-SHA256 ") or len(scope) != 5 or scope[0] != AWS_CREDENTIALS["AWS_ACCESS_KEY_ID"] or scope[2:] != [AWS_CREDENTIALS["AWS_REGION"], "bedrock", "aws4_request"]:
        return False
    if recorded.headers.get("x-amz-security-token") != AWS_CREDENTIALS["AWS_SESSION_TOKEN"] or "host" not in names or "x-amz-date" not in names:
        return False
    request = AWSRequest("POST", _wire_server().url + recorded.path, data=recorded.raw, headers={n: recorded.headers[n] for n in names if n != "host"})
    request.context["timestamp"] = recorded.headers["x-amz-date"]
    signer = SigV4Auth(Credentials(AWS_CREDENTIALS["AWS_ACCESS_KEY_ID"], AWS_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], AWS_CREDENTIALS["AWS_SESSION_TOKEN"]), "bedrock", AWS_CREDENTIALS["AWS_REGION"])
    canonical = signer.canonical_request(request)
    return bool(fields.get("Signature") == signer.signature(signer.string_to_sign(request, canonical), request) and signer.signed_headers(signer.headers_to_sign(request)) == ";".join(names))


@cache
def _wire_force_runs() -> dict[tuple[str, bool, int, bool, tuple[bool, ...]], m.Forced]:
    from eukhe.inference.wire import WireModel

    tools = (WireTool("read", "Read a file."), WireTool("edit"))
    described = {api: ("Read a file.", None if api == oracle.API_BEDROCK else "") for api in WIRE_APIS}  # Bedrock refuses an empty description
    out = {}
    for case in _wire_force_cases():
        api, manual, retries, free, replies = case
        shape = (2 * retries + free + len(replies)) % len(FORCE_HISTORIES)
        system, history = FORCE_HISTORIES[shape]
        images = ("text", "image") if free else ("text",)
        sign_in, environment = _wire_sign_in(api, second=retries % 2 == 1) if shape == 1 else ({}, {})
        model: WireModel = dataclasses.replace(_wire_model(api, reasoning=manual, input=images), **sign_in)
        supported = not (manual and api in oracle.MANUAL_THINKING_REJECTS)
        flags: list[bool] = []

        def send(request: force.ForcedRequest) -> bool:
            called = replies[request.attempt] if request.attempt < len(replies) else False
            script = lb.Stream([lb.Call("read", '{"path": "a"}')], stop="toolUse") if called else lb.Stream([lb.Text("no call")])
            ask = WireRequest(history, system=system, system_cache=bool(system), tools=tools, thinking="high" if manual else None, forced_tool="read", forced=request)
            with _environment(environment):
                [(recorded, reply)] = _wire_exchange([(model, ask, script)])
            if api == oracle.API_CODEX and recorded.headers.get("chatgpt-account-id") != ("acct-law" if sign_in.get("api_key") == _JWT else None):
                raise LawFailed(f"{api}: the account header {recorded.headers.get('chatgpt-account-id')!r} is not the token's account")
            if api == oracle.API_BEDROCK and environment and not _sigv4_says(recorded):
                raise LawFailed(f"{api}: the SigV4 signature {recorded.headers.get('authorization')!r} is not botocore's for the bytes sent")
            flag = oracle.forced_says(api, recorded.body, "read")
            if oracle.tool_names_says(api, recorded.body) != ("read", "edit"):
                raise LawFailed(f"{api}: attempt {request.attempt} offers {oracle.tool_names_says(api, recorded.body)}, not the tools read, edit")
            if oracle.tool_descriptions_says(api, recorded.body) != described[api]:
                raise LawFailed(f"{api}: attempt {request.attempt} describes the tools as {oracle.tool_descriptions_says(api, recorded.body)}, not {described[api]}")
            if flag is None or "read" not in oracle.last_user_text_says(api, recorded.body).replace("go on", ""):
                raise LawFailed(f"{api}: attempt {request.attempt} sent {recorded.body!r}: no soft prompt naming the tool, or a wrong choice")
            flags.append(flag)
            if not isinstance(reply, WireReply):
                raise LawFailed(f"{api}: the reply did not decode: {reply}")
            return any(call.name == "read" for call in reply.tool_calls)

        try:
            force.run("read", retries, supported, free, send)
        except force.ForcedToolError:
            out[case] = m.Forced(tuple(flags), m.NOT_CALLED)
        else:
            out[case] = m.Forced(tuple(flags), m.CALLED)
    return out


def _wire_force(prop: Any) -> Evidence:
    runs = _wire_force_runs()

    def ok(case: tuple[str, bool, int, bool, tuple[bool, ...]]) -> bool:
        api, manual, retries, free, replies = case
        supported = not (manual and api in oracle.MANUAL_THINKING_REJECTS)
        return bool(prop((retries, supported, free, replies), runs[case]))

    return bounded(_wire_force_cases(), ok, label=f"production, flags read off the wire: {WIRE_RUNS}")


# force's encoding generated from its code: its loop over the attempts a z3 recursive function.
_FORCE = generated(m.force)
_RETRIES, _ATTEMPT = z3.Ints("retries attempt")
_SUPPORTED, _FREE = z3.Bools("supported free")
_REPLIES = fresh(tuple[bool, ...], "replies")


def _called(i: Any) -> Any:
    """Whether attempt i's reply called the tool (a missing reply is a miss)."""
    return z3.If(i < _REPLIES.length, item(_REPLIES, i), False)


def _attempts_so_far(attempt: Any, flags: Items, step: Any, facts_kept: tuple[str, ...]) -> Any:
    """The seed's forced call after ``attempt`` (S6.3): one flag per attempt made, and the facts
    named of them: ``first``, the first flag set only if supported and free; ``retries``, every
    retry's iff supported; ``misses``, every earlier reply a miss and the step after this
    attempt's reply (called, else retry while attempt + 1 <= retries, else not called). A claim
    carries only the facts it needs: fewer quantifiers for z3 to instantiate."""
    i = z3.Int("i")
    kept = {
        "first": lambda: item(flags, 0) == z3.And(_SUPPORTED, _FREE),
        "retries": lambda: z3.ForAll([i], z3.Implies(z3.And(1 <= i, i <= attempt), item(flags, i) == _SUPPORTED)),
        "misses": lambda: z3.And(
            z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < attempt), z3.Not(_called(i)))),
            step == z3.If(_called(attempt), z3.StringVal(m.CALLED), z3.If(attempt + 1 <= _RETRIES, z3.StringVal(m.RETRY), z3.StringVal(m.NOT_CALLED))),
        ),
    }
    return z3.And(0 <= attempt, attempt <= _RETRIES, flags.length == attempt + 1, *(kept[name]() for name in facts_kept))


def _force_loop(attempt: Any, flags: Items, step: Any) -> Any:
    return _FORCE.loop(attempt=attempt, flags=flags, step=step, retries=_RETRIES, supported=_SUPPORTED, free=_FREE, replies=_REPLIES)


_CALLED_AT = generated(m.called_at)


def _next_attempt(attempt: Any, flags: Items) -> tuple[Any, Items, Any]:
    """The state a retry of force's loop passes on: attempt + 1, its flag appended, its reply's
    step (the terms the loop's body builds, from the encodings of flag, after and called_at)."""
    following = attempt + 1
    flag_of = _z3_flag(following, _SUPPORTED, _FREE)
    appended = Items(z3.Store(flags.array, flags.length + 0, flag_of), flags.length + 1)
    return following, appended, _z3_after(following, _RETRIES, _CALLED_AT(_REPLIES, following))


def _first_attempt() -> tuple[Any, Items, Any]:
    """The state force enters its loop with: attempt 0, its flag, its reply's step (the terms
    force's body builds before the loop)."""
    zero = z3.IntVal(0)
    flags = Items(z3.Store(z3.K(z3.IntSort(), z3.BoolVal(False)), zero + 0, _z3_flag(zero, _SUPPORTED, _FREE)), zero + 1)
    return zero, flags, _z3_after(zero, _RETRIES, _CALLED_AT(_REPLIES, zero))


def _force_induction(claim: Callable[[Any], Any], what: str, facts_kept: tuple[str, ...] = ()) -> Evidence:
    """Induction on force's loop over the attempts, from the last attempt it may make back to the
    first (on retries - attempt): every state the seed's steps reach gives a run the claim holds
    of; then the run force starts is such a state. The step assumes the claim of the state a
    retry passes on, and the entry the claim of the state force enters the loop with: instances
    of the hypothesis (for attempt + 1, and for attempt 0). For every natural retry count and
    reply list."""
    flags_array, flags_length, step_of = z3.Array("flags", z3.IntSort(), z3.BoolSort()), z3.Int("len(flags)"), z3.String("step")
    flags = Items(flags_array, flags_length)
    assumptions = [_RETRIES >= 0, *facts(_REPLIES)]
    ties = [_FORCE.tie, _CALLED_AT.tie, _z3_flag.tie, _z3_after.tie]

    def holds(attempt: Any, flags_now: Items, step_now: Any) -> Any:
        return z3.Implies(_attempts_so_far(attempt, flags_now, step_now, facts_kept), claim(_force_loop(attempt, flags_now, step_now)))

    base = prove(
        lambda: z3.Implies(_ATTEMPT >= _RETRIES, holds(_ATTEMPT, flags, step_of)),
        label=f"base: no attempt is left (attempt >= retries): the run is the flags and the step so far ({what})", assumptions=assumptions, ties=ties,
    )
    step = prove(
        lambda: z3.Implies(z3.And(_ATTEMPT < _RETRIES, holds(*_next_attempt(_ATTEMPT, flags))), holds(_ATTEMPT, flags, step_of)),
        label=f"step: a retry takes attempt + 1 with its flag and its reply's step ({what})", assumptions=assumptions, ties=ties,
    )
    loop = induction(base, step, of="bend.infer.force", label=f"force's attempts, from the last it may make back to the first ({what})")
    entry = prove(
        lambda: z3.Implies(holds(*_first_attempt()), claim(_FORCE(_RETRIES, _SUPPORTED, _FREE, _REPLIES))),
        label=f"force enters its loop after attempt 0 (the hypothesis at that state) ({what})", assumptions=assumptions, ties=ties,
    )
    return all_of(loop, entry)


@law("force_bounded", "S6.3", "A forced call makes at most 1 + retries attempts.", PROVED)
def force_bounded() -> Evidence:
    proof = _force_induction(lambda run: run.flags.length <= 1 + _RETRIES, "attempts <= 1 + retries")
    return also(proof, _force_law(lambda c, out: len(out.flags) <= 1 + c[0], "attempts <= 1 + retries"))


# The SigV4 signature of Claude on Bedrock's requests (the forced call's sign-in above) over the other
# inputs a signer meets, each judged by botocore's own signer: a base URL with dot segments (one
# climbing past the root), an IPv6 host, a default and a non-default port, a query out of order,
# header values with runs of spaces, and long-term credentials with no session token.
SIGV4_URLS = (
    "https://bedrock-runtime.eu-west-3.amazonaws.com:443/model/anthropic.claude-x%3A0/converse-stream",
    "http://127.0.0.1:8080/proxy/./a/../model/m-1/converse-stream?b=2&a=1",
    "http://[::1]:9000/model/m-1/converse-stream",
    "http://127.0.0.1:80/proxy/../../model/m-1/converse-stream",
)
SIGV4_CREDENTIALS = ((AWS_CREDENTIALS["AWS_ACCESS_KEY_ID"], AWS_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], AWS_CREDENTIALS["AWS_SESSION_TOKEN"]), ("AKIDLONG", "long-term-secret", None))


def _sigv4_inputs() -> Evidence:
    from datetime import datetime, timezone

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    from eukhe.inference.wire import sigv4

    def ok(case: tuple[str, tuple[str, str, str | None]]) -> bool:
        url, (key, secret, token) = case
        headers = {"content-type": "application/json", "x-amz-target": "  spaced   value "}
        body = b'{"messages": []}'
        added = sigv4.sign("POST", url, headers, body, sigv4.Credentials(key, secret, token), "eu-west-3", "bedrock", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
        request = AWSRequest("POST", url, data=body, headers={**headers, **{k: v for k, v in added.items() if k != "authorization"}})
        request.context["timestamp"] = added["x-amz-date"]
        signer = SigV4Auth(BotoCredentials(key, secret, token), "bedrock", "eu-west-3")
        want = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
        names = signer.signed_headers(signer.headers_to_sign(request))
        return added["authorization"] == f"AWS4-HMAC-SHA256 Credential={key}/20260102/eu-west-3/bedrock/aws4_request, SignedHeaders={names}, Signature={want}" and ("x-amz-security-token" in added) == (token is not None)

    return bounded(itertools.product(SIGV4_URLS, SIGV4_CREDENTIALS), ok, label="SigV4 by botocore's signer: dot segments, IPv6, default and other ports, an unordered query, spaced header values, with and without a session token")


@law("force_first_flag", "S6.3", "The first attempt sets native forced choice only if supported and free.", PROVED)
def force_first_flag() -> Evidence:
    proof = _force_induction(lambda run: z3.And(run.flags.length >= 1, item(run.flags, 0) == z3.And(_SUPPORTED, _FREE)), "the first flag: supported and free", ("first",))
    return also(proof, _force_law(lambda c, out: out.flags[0] == oracle.flag_says(0, c[1], c[2]), "first flag")).with_production(_sigv4_inputs())


@law("force_retry_flag", "S6.3", "Every retry sets native forced choice iff supported.", PROVED)
def force_retry_flag() -> Evidence:
    j = z3.Int("j")  # free: the proof holds for every j, so for every retry's flag
    proof = _force_induction(
        lambda run: z3.Implies(z3.And(1 <= j, j < run.flags.length), item(run.flags, j) == _SUPPORTED), "every retry's flag (flag j, every j >= 1): supported", ("retries",)
    )
    return also(proof, _force_law(lambda c, out: all(f == c[1] for f in out.flags[1:]), "retry flags"))


@law("force_reports", "S6.3", "A forced call reports a call iff the model called the tool within its attempts.", PROVED)
def force_reports() -> Evidence:
    i = z3.Int("i")

    def reports(run: Any) -> Any:
        made = run.flags.length
        called = z3.And(made <= _RETRIES + 1, _called(made - 1), z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < made - 1), z3.Not(_called(i)))))
        missed = z3.And(made == _RETRIES + 1, z3.ForAll([i], z3.Implies(z3.And(0 <= i, i <= _RETRIES), z3.Not(_called(i)))))
        return z3.If(run.outcome == z3.StringVal(m.CALLED), called, z3.And(run.outcome == z3.StringVal(m.NOT_CALLED), missed))

    def prop(c: tuple[int, bool, bool, tuple[bool, ...]], out: m.Forced) -> bool:
        retries, _s, _f, replies = c
        within = replies[: retries + 1]
        called = True in within
        attempts = within.index(True) + 1 if called else retries + 1
        return (out.outcome == m.CALLED) == called and len(out.flags) == attempts

    proof = _force_induction(reports, "called: the first attempt whose reply called, within 1 + retries; else not called after 1 + retries misses", ("misses",))
    return also(proof, _force_law(prop, "reports iff called within 1 + retries attempts"))


@law("infer_force_steps", "S6.3", "The compiled steps driven over the replies are force: the harness's forced call equals the model's run.", BOUNDED)
def infer_force_steps() -> Evidence:
    def driven(c: tuple[int, bool, bool, tuple[bool, ...]]) -> m.Forced:
        retries, supported, free, replies = c
        flags, attempt = [], 0
        while True:  # the steps, driven as the seed states them (oracle rules)
            flags.append(oracle.flag_says(attempt, supported, free))
            called = replies[attempt] if attempt < len(replies) else False
            step = oracle.after_says(attempt, retries, called)
            if step != "retry":
                break
            attempt += 1
        return m.Forced(tuple(flags), step)

    model = bounded(_runs(), lambda c: m.force(*c) == driven(c), label=f"{RUNS}: model force equals the seed's steps driven")
    prod = bounded(_runs(), lambda c: _production_run(*c) == driven(c), label=f"production eukhe.inference.force.run: {RUNS}")
    return model.with_production(prod)


# -- the strict plan (S6.4) -------------------------------------------------------------------------------

PlanCase = tuple[tuple[m.Tool, ...], int]


def _plans() -> Iterator[PlanCase]:
    for n in range(6):
        for priorities in itertools.product(range(max(n, 1)), repeat=n):
            if set(priorities) != set(range(max(priorities, default=-1) + 1)):
                continue  # one priority list per weak order: the plan reads only comparisons
            tools = tuple(m.Tool(f"t{i % 3}", p) for i, p in enumerate(priorities))  # names repeat: multiplicity
            for cap in range(7):
                yield tools, cap


PLANS = "0..5 tools with every weak order of their priorities (1,082 lists), names repeating, caps 0..6"


def _modes_model(tools: tuple[m.Tool, ...], cap: int) -> tuple[str, ...]:
    return m.strict_plan(tools, cap).modes


def _modes_production(tools: tuple[m.Tool, ...], cap: int) -> tuple[str, ...]:
    plan = constrained.strict_budget([constrained.ToolSpec(t.name, t.priority) for t in tools], cap)
    if tuple(t.name for t in plan.tools) != tuple(t.name for t in tools):
        raise LawFailed("production's plan changed the tools")
    return tuple(m.STRICT if s else m.LOOSE for s in plan.strict)


TOOLS = st.lists(st.builds(m.Tool, st.sampled_from(["a", "b", "ü", ""]), st.integers(-(10**20), 10**20)), max_size=12)


def _strict_law(prop: Any, label: str) -> Evidence:
    model = bounded(_plans(), lambda c: prop(c[0], c[1], _modes_model(*c)), label=f"{PLANS} ({label})")
    prod = bounded(_plans(), lambda c: prop(c[0], c[1], _modes_production(*c)), label=f"production strict_budget: {PLANS}")
    hunt = examples(lambda tools, cap: prop(tuple(tools), cap, _modes_model(tuple(tools), cap)), tools=TOOLS, cap=st.integers(0, 14))
    return also(model, hunt).with_production(prod).with_production(_wire_strict(prop))


# The strict plan on the wire: each built API's client builds the request for the tools with the
# cap given as model.compat.strictCap (S6.1: explicit compat answers strict_cap), and the modes are
# read back from the tools of the body (spec.oracles.infer: strict_says): chat and Mistral
# function.strict, Responses (Azure, Codex) and Anthropic strict, Bedrock toolSpec.strict; every API
# offers every tool in its place. Gemini's form (Google, Vertex) has no per-tool flag: its request is
# VALIDATED iff the plan holds a strict tool (min(cap, tools) > 0). The plans of at most 2 tools also
# go to the loopback server: the body it received is the one built.
WIRE_PLANS = (
    f"the {len(WIRE_APIS)} wire APIs: 0..4 tools with every weak order of their priorities, caps 0..6"
    " (the bodies the clients build; those of <= 2 tools sent over loopback)"
)


@cache
def _wire_strict_bodies() -> dict[tuple[str, tuple[m.Tool, ...], int], dict[str, Any]]:
    out: dict[tuple[str, tuple[m.Tool, ...], int], dict[str, Any]] = {}
    sent = []
    for (tools, cap), api in itertools.product(_plans(), WIRE_APIS):
        if len(tools) > 4:
            continue
        model = _wire_model(api, compat={"strictCap": cap})
        request = WireRequest((WireMessage("user", "go"),), tools=tuple(WireTool(t.name, priority=t.priority) for t in tools))
        out[api, tools, cap] = _wire_built(model, request)
        if len(tools) <= 2:
            sent.append(((api, tools, cap), (model, request, lb.Stream([lb.Text("ok")]))))
    for (key, _pair), (recorded, _reply) in zip(sent, _wire_exchange([pair for _key, pair in sent])):
        if recorded.body != out[key]:
            raise LawFailed(f"{key[0]}: the body sent differs from the one built: {recorded.body!r}")
    return out


def _wire_strict(prop: Any) -> Evidence:
    bodies = _wire_strict_bodies()

    def ok(key: tuple[str, tuple[m.Tool, ...], int]) -> bool:
        api, tools, cap = key
        body = bodies[key]
        if oracle.tool_names_says(api, body) != tuple(t.name for t in tools):
            raise LawFailed(f"{api}: the body offers {oracle.tool_names_says(api, body)}, not the tools {[t.name for t in tools]}")
        flags = oracle.strict_says(api, body)
        if flags is None:
            return oracle.validated_says(body) == (min(cap, len(tools)) > 0)
        return bool(prop(tools, cap, tuple(m.STRICT if f else m.LOOSE for f in flags)))

    return bounded(bodies, ok, label=f"production through the real wire clients: {WIRE_PLANS}")


# Proofs about strict_plan's code (spec.z3gen): modes_of and ahead_of are loops over range(len(tools)),
# each proved by induction on its loop (the step's hypothesis at the states ``successors`` gives):
# - modes_of gives one mode per tool, tool q strict iff fewer than cap tools come before it
#   (ahead_of(tools, q) < cap), for a free q (so for every q);
# - a tool that comes before another has fewer tools before it: for j before i, the count of
#   ahead_of's walk for i exceeds the one for j by at least 1 from the place of j on (a relational
#   induction: both walks of the one loop, side by side).
_AHEAD, _MODES, _STRICT_PLAN, _BEATS = generated(m.ahead_of), generated(m.modes_of), generated(m.strict_plan), generated(m.beats)
_TOOLS, _MODES_SO_FAR = fresh(tuple[m.Tool, ...], "tools"), fresh(tuple[str, ...], "modes")
_CAP, _Q, _H, _STOP, _A, _B, _I, _J = z3.Ints("cap q h stop a b i j")
_STRICT_INPUTS = [*facts(_TOOLS), *facts(_MODES_SO_FAR)]
_STRICT_TIES = [_AHEAD.tie, _MODES.tie, _STRICT_PLAN.tie, _BEATS.tie]


def _mode_of(q: Any) -> Any:
    """Tool q's mode by the count of tools before it."""
    return z3.If(_AHEAD(_TOOLS, q) < _CAP, z3.StringVal(m.STRICT), z3.StringVal(m.LOOSE))


def _modes_say(modes: Items, upto: Any) -> Any:
    """``modes`` holds one mode per tool before ``upto``; that of tool q (free: any q) is _mode_of(q)."""
    return z3.And(modes.length == upto, z3.Implies(z3.And(0 <= _Q, _Q < upto), item(modes, _Q) == _mode_of(_Q)))


def _strict_induction(fn: Any, state: dict[str, Any], holds: Callable[[dict[str, Any]], Any], hypotheses: Callable[[], list[Any]], what: str) -> Evidence:
    base = prove(lambda: z3.Implies(z3.Not(state["_index"] < state["_stop"]), holds(state)), label=f"base: the walk is over ({what})", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES)
    step = prove(
        lambda: z3.Implies(z3.And(state["_index"] < state["_stop"], *hypotheses()), holds(state)),
        label=f"step: the next tool, from the states the body walks on with ({what})", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return induction(base, step, of=fn.of, label=f"{fn.of}'s walk over the tools ({what})")


@cache
def _modes_lemma() -> Evidence:
    """modes_of(tools, cap) says, for every tool q, _mode_of(q), and holds len(tools) modes."""
    n = _TOOLS.length

    def holds(at: dict[str, Any]) -> Any:
        walked = z3.And(0 <= at["_index"], at["_index"] <= at["_stop"], at["_stop"] == n, _modes_say(at["modes"], at["_index"]))
        return z3.Implies(walked, _modes_say(_MODES.loop(**at), n))

    state = {"cap": _CAP, "modes": _MODES_SO_FAR, "tools": _TOOLS, "_index": _H, "_stop": _STOP}
    loop = _strict_induction(_MODES, state, holds, lambda: [holds(after) for _path, after in _MODES.successors(**state)], "one mode per tool, each by its count")
    entry = prove(
        lambda: z3.Implies(holds(_MODES.entered(_TOOLS, _CAP)), _modes_say(_MODES(_TOOLS, _CAP), n)),
        label="modes_of starts at the first tool with no mode", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return all_of(loop, entry)


def _before(j: Any, i: Any) -> Any:
    """Tool j comes before tool i (two tools of the list)."""
    n = _TOOLS.length
    return z3.And(_BEATS(_TOOLS, j, i), j != i, 0 <= i, i < n, 0 <= j, j < n)


@cache
def _ahead_lemma() -> Evidence:
    """For j before i: ahead_of(tools, i) >= ahead_of(tools, j) + 1."""
    n = _TOOLS.length

    def walks(i: Any, at: Any, count: Any) -> dict[str, Any]:
        return {"ahead": count, "i": i, "tools": _TOOLS, "_index": at, "_stop": _STOP}

    def related(left: dict[str, Any], right: dict[str, Any]) -> Any:
        """From the same place, the walk for i gains at least what the walk for j gains, and 1
        more while the place of j is still ahead."""
        at = left["_index"]
        gained = _AHEAD.loop(**left) - left["ahead"] >= _AHEAD.loop(**right) - right["ahead"] + z3.If(at <= _J, 1, 0)
        return z3.Implies(z3.And(0 <= at, left["_stop"] == n, right["_stop"] == n, right["_index"] == at, _before(_J, _I)), gained)

    def hypotheses() -> list[Any]:
        lefts = _AHEAD.successors(**walks(_I, _H, _A))
        rights = _AHEAD.successors(**walks(_J, _H, _B))
        return [related(left, right) for (_p, left), (_q, right) in itertools.product(lefts, rights)]

    loop = _strict_induction(_AHEAD, walks(_I, _H, _A) | {"_stop": _STOP}, lambda at: related(at, walks(_J, _H, _B)), hypotheses, "the walk for i keeps ahead of the walk for j")
    entry = prove(
        lambda: z3.Implies(
            z3.And(related(_AHEAD.entered(_TOOLS, _I), _AHEAD.entered(_TOOLS, _J)), _before(_J, _I)), _AHEAD(_TOOLS, _I) >= _AHEAD(_TOOLS, _J) + 1
        ),
        label="both walks start at the first tool with no count", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return all_of(loop, entry)


def _plan_modes() -> Items:
    modes: Items = _STRICT_PLAN(_TOOLS, _CAP).modes
    return modes


@cache
def _ahead_range() -> Evidence:
    """For every tool i of the list: 0 <= ahead_of(tools, i) <= len(tools) - 1 (the walk counts at
    most the tools it passed, i itself never), by induction on ahead_of's walk."""
    n = _TOOLS.length

    def holds(at: dict[str, Any]) -> Any:
        passed = at["_index"] - z3.If(at["i"] < at["_index"], 1, 0)
        walked = z3.And(0 <= at["_index"], at["_index"] <= at["_stop"], at["_stop"] == n, 0 <= at["i"], at["i"] < n, 0 <= at["ahead"], at["ahead"] <= passed)
        got = _AHEAD.loop(**at)
        return z3.Implies(walked, z3.And(0 <= got, got <= n - 1))

    state = {"ahead": _A, "i": _I, "tools": _TOOLS, "_index": _H, "_stop": _STOP}
    loop = _strict_induction(_AHEAD, state, holds, lambda: [holds(after) for _path, after in _AHEAD.successors(**state)], "the count stays within the tools passed")
    entry = prove(
        lambda: z3.Implies(z3.And(holds(_AHEAD.entered(_TOOLS, _I)), 0 <= _I, _I < n), z3.And(0 <= _AHEAD(_TOOLS, _I), _AHEAD(_TOOLS, _I) <= n - 1)),
        label="ahead_of starts at the first tool with no count", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return all_of(loop, entry)


def _ahead_distinct() -> Evidence:
    """Two tools of the list have different counts ahead_of(tools, .): one comes before the other
    (the strict order is total: beats' code compares priorities, then places), and the later has
    more tools before it (the ahead lemma, at both orders of the two tools i and j)."""
    n = _TOOLS.length

    def claim() -> Any:
        known = [
            z3.Implies(_before(_J, _I), _AHEAD(_TOOLS, _I) >= _AHEAD(_TOOLS, _J) + 1),
            z3.Implies(_before(_I, _J), _AHEAD(_TOOLS, _J) >= _AHEAD(_TOOLS, _I) + 1),
        ]
        return z3.Implies(z3.And(*known, 0 <= _I, _I < n, 0 <= _J, _J < n, _I != _J), _AHEAD(_TOOLS, _I) != _AHEAD(_TOOLS, _J))

    proof = prove(claim, label="two tools i != j of the list: ahead_of differs (one beats the other)", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES)
    return all_of(_ahead_lemma(), proof)


def _plan_strict_iff() -> Evidence:
    """strict_plan holds one mode per tool, and tool q's is strict iff ahead_of(tools, q) < cap
    (the modes lemma at a free q, passed through strict_plan's code)."""
    n = _TOOLS.length
    strict = z3.StringVal(m.STRICT)
    plan = prove(
        lambda: z3.Implies(
            _modes_say(_MODES(_TOOLS, _CAP), n),
            z3.And(_plan_modes().length == n, z3.Implies(z3.And(0 <= _Q, _Q < n), (item(_plan_modes(), _Q) == strict) == (_AHEAD(_TOOLS, _Q) < _CAP))),
        ),
        label="strict_plan's modes: one per tool, tool q strict iff fewer than cap tools come before it (any q)", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return all_of(_modes_lemma(), plan)


# The count of strict modes, for the lemmas below (mathematics, about no code): ``_BELOW(F, k, c)``
# counts the values of F[0..k) below c, ``_STRICTS(M, k)`` the strict modes of M[0..k) (the law's
# ``modes.count(STRICT)`` for k = len(modes)).
_ARRAY = z3.ArraySort(z3.IntSort(), z3.IntSort())
_MODE_ARRAY = z3.ArraySort(z3.IntSort(), z3.StringSort())
_BELOW = z3.RecFunction("count_below", _ARRAY, z3.IntSort(), z3.IntSort(), z3.IntSort())
_STRICTS = z3.RecFunction("count_strict", _MODE_ARRAY, z3.IntSort(), z3.IntSort())
_cf, _cm = z3.Const("F", _ARRAY), z3.Const("M", _MODE_ARRAY)
_ck, _cc = z3.Ints("k c")
z3.RecAddDefinition(_BELOW, [_cf, _ck, _cc], z3.If(_ck <= 0, 0, _BELOW(_cf, _ck - 1, _cc) + z3.If(_cf[_ck - 1] < _cc, 1, 0)))
z3.RecAddDefinition(_STRICTS, [_cm, _ck], z3.If(_ck <= 0, 0, _STRICTS(_cm, _ck - 1) + z3.If(_cm[_ck - 1] == z3.StringVal(m.STRICT), 1, 0)))


@cache
def _counting_lemmas() -> Evidence:
    """A one-to-one map F of the places [0, n) into [0, n) has exactly min(c, n) values below c
    (c >= 0), so modes strict exactly where F is below c number min(c, n). Each a z3 lemma about
    no code, by induction:
    - the pigeonhole principle on n (an injection of [0, d) into [0, n) has d <= n), so an
      injection of [0, n + 1) into [0, n + 1) takes the value n at some place q0 (else it maps
      [0, n + 1) into [0, n));
    - on k: changing F at one place q0 < k changes the count of F[0..k) below c by what the new
      value adds and the old one took;
    - on n: with F[q0] = n, G (F with F[n] moved to q0) maps [0, n) one-to-one into [0, n), so by
      the hypothesis at n it has min(c, n) values below c; F's count is G's with n's place back;
    - on k: modes strict exactly where F is below c count as F's values below c."""
    f, mm = z3.Const("F", _ARRAY), z3.Const("M", _MODE_ARRAY)
    n, d, c, k, q0, v, i, j = z3.Ints("n d c k q0 v i j")

    def inj(g: Any, size: Any) -> Any:
        return z3.ForAll([i, j], z3.Implies(z3.And(0 <= i, i < size, 0 <= j, j < size, i != j), g[i] != g[j]))

    def into(g: Any, size: Any, bound: Any) -> Any:
        return z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < size), z3.And(0 <= g[i], g[i] < bound)))

    def least(a: Any, b: Any) -> Any:
        return z3.If(a < b, a, b)

    def changed(g: Any, at: Any, value: Any, upto: Any) -> Any:
        """The count of g = F with F[at] := value, from F's."""
        return _BELOW(g, upto, c) == _BELOW(f, upto, c) + z3.If(z3.And(0 <= at, at < upto), z3.If(value < c, 1, 0) - z3.If(f[at] < c, 1, 0), 0)

    squeezed = z3.Lambda([i], z3.If(f[i] == n, f[d - 1], f[i]))
    pigeonhole = all_of(
        lemma(lambda: z3.Implies(z3.And(d >= 0, into(f, d, 0)), d <= 0), label="pigeonhole by induction on n, n = 0: nothing maps into [0, 0)"),
        lemma(lambda: z3.Implies(z3.And(d >= 1, n >= 0, inj(f, d), into(f, d, n + 1)), z3.And(inj(squeezed, d - 1), into(squeezed, d - 1, n))),
              label="pigeonhole, n to n + 1: F one-to-one from [0, d) into [0, n + 1) gives one from [0, d - 1) into [0, n)"),
    )
    moved = z3.Store(f, q0, v)
    one_place = all_of(
        lemma(lambda: changed(moved, q0, v, z3.IntVal(0)), label="one place changed, by induction on k, k = 0: no value counted"),
        lemma(lambda: z3.Implies(z3.And(k >= 0, changed(moved, q0, v, k)), changed(moved, q0, v, k + 1)), label="one place changed, k to k + 1"),
    )
    g = z3.Store(f, q0, f[n])

    def counted(h: Any, size: Any) -> Any:
        return z3.Implies(z3.And(c >= 0, inj(h, size), into(h, size, size)), _BELOW(h, size, c) == least(c, size))

    bijection = all_of(
        lemma(lambda: z3.Implies(c >= 0, _BELOW(f, 0, c) == least(c, 0)), label="min(c, n) values below c, by induction on n, n = 0"),
        lemma(
            lambda: z3.Implies(
                z3.And(n >= 0, c >= 0, 0 <= q0, q0 <= n, f[q0] == n, inj(f, n + 1), into(f, n + 1, n + 1), counted(g, n), changed(g, q0, f[n], n)),
                _BELOW(f, n + 1, c) == least(c, n + 1),
            ),
            label="min(c, n) values below c, n to n + 1: F[q0] = n, and G (F[n] moved to q0) one-to-one on [0, n)",
        ),
    )
    strict = z3.StringVal(m.STRICT)
    matched = all_of(
        lemma(lambda: _STRICTS(mm, 0) == _BELOW(f, 0, c), label="strict where F is below c, by induction on k, k = 0"),
        lemma(lambda: z3.Implies(z3.And(k >= 0, _STRICTS(mm, k) == _BELOW(f, k, c), (mm[k] == strict) == (f[k] < c)), _STRICTS(mm, k + 1) == _BELOW(f, k + 1, c)),
              label="strict where F is below c, k to k + 1"),
    )
    return all_of(pigeonhole, one_place, bijection, matched)


@law("strict_within_cap", "S6.4", "A request has at most strict_cap strict schemas (and min(cap, tools) of them).", PROVED)
def strict_within_cap() -> Evidence:
    """Proved about strict_plan's code for every list of tools and every cap >= 0: its modes are
    one per tool, tool q strict iff ahead_of(tools, q) < cap; ahead_of maps the n places one-to-one
    (two tools: one comes before the other, and the later has more before it) into [0, n); so the
    strict modes count the values of a one-to-one map of [0, n) into [0, n) below cap: min(cap, n)
    (the counting lemmas, mathematics about no code)."""
    proof = all_of(_plan_strict_iff(), _ahead_distinct(), _ahead_range(), _counting_lemmas())
    return also(proof, _strict_law(lambda tools, cap, modes: modes.count(m.STRICT) == min(cap, len(tools)), "strict count = min(cap, tools)"))


@law("strict_keeps_every_tool", "S6.4", "Each tool is strict or loose, in its place, with its multiplicity: none dropped.", PROVED)
def strict_keeps_every_tool() -> Evidence:
    n = _TOOLS.length
    plan = prove(
        lambda: z3.Implies(
            _modes_say(_MODES(_TOOLS, _CAP), n),
            z3.And(_plan_modes().length == n, z3.Implies(z3.And(0 <= _Q, _Q < n), z3.Or(item(_plan_modes(), _Q) == z3.StringVal(m.STRICT), item(_plan_modes(), _Q) == z3.StringVal(m.LOOSE)))),
        ),
        label="strict_plan's modes are modes_of's: one per tool, each strict or loose (tool q: any q)", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES,
    )
    return also(all_of(_modes_lemma(), plan), _strict_law(lambda tools, cap, modes: len(modes) == len(tools) and all(x in (m.STRICT, m.LOOSE) for x in modes), "one mode per tool"))


@law("strict_by_priority", "S6.4", "Every strict tool's priority is at least every loose one's; among equals the earlier is strict.", PROVED)
def strict_by_priority() -> Evidence:
    def prop(tools: tuple[m.Tool, ...], cap: int, modes: tuple[str, ...]) -> bool:
        for i, j in itertools.product(range(len(tools)), repeat=2):
            if modes[i] == m.STRICT and modes[j] == m.LOOSE:
                if tools[i].priority < tools[j].priority or (tools[i].priority == tools[j].priority and i > j):
                    return False
        return True

    def claim() -> Any:
        says = _modes_say(_MODES(_TOOLS, _CAP), _TOOLS.length)  # the modes lemma, its free tool q read at tools i and j
        known = [z3.substitute(says, (_Q, _I)), z3.substitute(says, (_Q, _J)), z3.Implies(_before(_J, _I), _AHEAD(_TOOLS, _I) >= _AHEAD(_TOOLS, _J) + 1)]
        strict = z3.StringVal(m.STRICT)
        return z3.Implies(z3.And(*known, _before(_J, _I), item(_plan_modes(), _I) == strict), item(_plan_modes(), _J) == strict)

    proof = prove(claim, label="tool j before tool i and i strict: j strict (fewer tools before it), for every pair of tools and cap", assumptions=_STRICT_INPUTS, ties=_STRICT_TIES)
    return also(all_of(_modes_lemma(), _ahead_lemma(), proof), _strict_law(prop, "strict >= loose, ties to the earlier"))


# -- the shipped rulebook's data (derived: S6.2, S6.7, S6.8, S6.12, S6.13 state them, name no law) -----


def _sample_of(fam: str) -> str:
    return {
        "claude-adaptive": "claude-haiku-5.5",
        "claude-adaptive-4-6": "claude-opus-4-6",
        "claude-cached": "claude-sonnet-4-5",
        "claude-uncached": "anthropic.claude-3-haiku-20240307-v1:0",
        "gpt-explicit-cache": "gpt-5.5-mini",
        "gpt-priority-explicit-cache": "gpt-5.5",
        "gpt-priority": "gpt-5.2",
        "gemini-3-plus": "gemini-3-pro",
        "gemini-latest": "gemini-flash-latest",
        "gemma-4": "gemma-4-27b",
        "gemini-2.5-pro": "gemini-2.5-pro",
        "gemini-2.5-flash": "gemini-2.5-flash",
        "gemini-2.5-flash-lite": "gemini-2.5-flash-lite",
        "qwen-3.8": "qwen3.8-27b",
        "qwen": "qwq-32b",
        "grok-4.3": "grok-4.3",
        "grok-4.5": "grok-4.5",
        "grok-4.6": "grok-4.7",
    }[fam]


@law(
    "quirk_shipped_facts",
    "S6.2, S6.13",
    "The shipped rulebook compiles with no overlap on the catalog, has every family the seed names, and answers every family fact, example and host of the seed.",
    BOUNDED,
    derivation="S6.2 and S6.13 list the shipped families, examples, hosts and facts",
)
def quirk_shipped_facts() -> Evidence:
    import json

    from eukhe.inference import catalog

    book = _shipped()
    book.check_catalog((model.id, model.name) for model in catalog.compiled())
    document = json.loads(quirks.shipped_text())
    document["families"].append({"id": "qwen-all", "pattern": "qw(?:en|q)"})
    try:
        quirks.load(json.dumps(document)).check_catalog((model.id, model.name) for model in catalog.compiled())
    except quirks.QuirksError as error:
        if error.kind != "FamilyOverlap":
            raise
    else:
        raise LawFailed("a family overlapping the qwen families on catalog models was accepted")
    if sorted(f.id for f in book.families) != sorted(oracle.FAMILIES):
        raise LawFailed(f"shipped families {sorted(f.id for f in book.families)} differ from the seed's")
    facts = [(d, fam, v) for d, table in oracle.FAMILY_FACTS.items() for fam, v in table.items()]
    unnamed = [(d, fam) for d in oracle.FAMILY_FACTS for fam in oracle.FAMILIES if fam not in oracle.FAMILY_FACTS[d]]
    a = bounded(facts, lambda c: book.family(_sample_of(c[1])).id == c[1] and book.query(quirks.ModelKey(_sample_of(c[1])), c[0]) == quirks.Answer(True, c[2], "family"), label=f"{len(facts)} family facts of S6.13")
    b = bounded(unnamed, lambda c: book.query(quirks.ModelKey(_sample_of(c[1])), c[0]) == quirks.UNKNOWN, label=f"{len(unnamed)} (directive, family) pairs S6.13 does not name: Unknown")
    c = bounded(oracle.FAMILY_EXAMPLES, lambda e: book.family(e[0]).id == e[1], label="the S6.2 family examples")
    d = bounded(oracle.HOST_EXAMPLES, lambda h: book.host(h[1], h[0], h[2]) == h[3], label="the S6.2 host examples")
    e = bounded(
        oracle.SCOPE_CAPABILITY_HOSTS,
        lambda h: any(x.id == h and x.scope == "capabilities" for x in book.hosts),
        label="the S6.7 scope-capabilities hosts",
    )

    def on_wire(case: tuple[str, str]) -> bool:
        """S6.13 as each wire API sends it, for a sample of the family, in the API's body form
        (spec.oracles.infer FORM): explicit cache breakpoints (the Responses form, OpenAI, Azure and
        Codex: prompt_cache_breakpoint on the marked block, reasoning.context all_turns),
        google_thinking_level and thinking_budgets (Gemini's form, the Gemini API and Vertex:
        thinkingLevel, else the rule's budget or -1) and adaptive_thinking (Anthropic: adaptive with
        the effort, else manual with the default budget; Bedrock the same fields of Claude's in
        additionalModelRequestFields, thinking.block_binding iff thinking_block_binding outside
        GovCloud, and cachePoint blocks iff prompt_caching). Mistral's form carries none of them
        (S6.13 names no fact its wire reads): none of their fields is in its body."""
        api, fam = case
        ask = WireRequest((WireMessage("user", "go", cache=True),), thinking="high")
        body = _wire_built(_wire_model(api, _sample_of(fam), provider=api.split("-")[0], reasoning=True), ask)
        form = oracle.FORM[api]
        if form == oracle.RESPONSES:
            named = oracle.FAMILY_FACTS["explicit_cache_breakpoints"].get(fam) is True
            marks = [b for item in body["input"] for b in item.get("content", []) if isinstance(b, dict) and "prompt_cache_breakpoint" in b]
            return marks == ([{"type": "input_text", "text": "go", "prompt_cache_breakpoint": {"mode": "explicit"}}] if named else []) and (
                body["reasoning"].get("context") == "all_turns"
            ) == named
        if form == oracle.GEMINI:
            thinking: dict[str, Any] = body["generationConfig"]["thinkingConfig"]
            if oracle.FAMILY_FACTS["google_thinking_level"].get(fam) is True:
                return thinking == {"includeThoughts": True, "thinkingLevel": "HIGH"}
            budgets: Any = oracle.FAMILY_FACTS["thinking_budgets"].get(fam)
            return thinking == {"includeThoughts": True, "thinkingBudget": budgets[3] if budgets else -1}
        if form == oracle.MISTRAL:
            text = json.dumps(body)
            return not any(name in text for name in ("prompt_cache_breakpoint", "all_turns", "thinkingConfig", "thinkingLevel", "budget_tokens", "adaptive"))
        fields = body.get("additionalModelRequestFields", {}) if form == oracle.CONVERSE else body
        thinking = dict(fields.get("thinking", {}))
        if form == oracle.CONVERSE:
            govcloud = any(os.environ.get(name, "").startswith("us-gov-") for name in ("AWS_REGION", "AWS_DEFAULT_REGION"))
            bound = oracle.FAMILY_FACTS["thinking_block_binding"].get(fam) is True and not govcloud
            cached = any("cachePoint" in block for message in body["messages"] for block in message["content"])
            if ("block_binding" in thinking) != bound or cached != (oracle.FAMILY_FACTS["prompt_caching"].get(fam) is True):
                return False
            thinking.pop("block_binding", None)
        if oracle.FAMILY_FACTS["adaptive_thinking"].get(fam) is True:
            return bool(thinking == {"type": "adaptive"} and fields.get("output_config") == {"effort": "high"})
        return bool(thinking == {"type": "enabled", "budget_tokens": oracle.DEFAULT_BUDGETS[3]} and "output_config" not in fields)

    # each API with the families whose facts its form carries, and one family whose facts it must not
    # send; Mistral with a family of each fact
    of_form = {
        oracle.RESPONSES: [f for f in oracle.FAMILIES if f.startswith("gpt")] + ["claude-cached"],
        oracle.GEMINI: [f for f in oracle.FAMILIES if f.startswith(("gemini", "gemma"))] + ["claude-cached"],
        oracle.ANTHROPIC: [f for f in oracle.FAMILIES if f.startswith("claude")],
        oracle.CONVERSE: [f for f in oracle.FAMILIES if f.startswith("claude")],  # each named by prompt_caching: no AWS_BEDROCK_FORCE_CACHE
        oracle.MISTRAL: ["gpt-explicit-cache", "gemini-3-plus", "gemini-2.5-pro", "claude-adaptive"],
    }
    wired = [(api, f) for api in WIRE_APIS for f in of_form.get(oracle.FORM[api], [])]
    f = bounded(wired, on_wire, label=f"{len(wired)} (wire API, family) pairs: the S6.13 facts in the bodies the real clients build")
    return all_of(a, b, c, d, e, f)


@law(
    "quirk_shipped_tiers_and_prices",
    "S6.8, S6.12",
    "The shipped service tiers, tier prices and 1-hour cache-write prices are the seed's tables, and calculate_cost applies them.",
    BOUNDED,
    derivation="S6.8 and S6.12 list the shipped tables",
)
def quirk_shipped_tiers_and_prices() -> Evidence:
    from eukhe.inference import catalog, tiers

    book = _shipped()
    t = bounded(oracle.SERVICE_TIERS, lambda r: tiers.service_tiers(book, r[0], r[1], r[2]) == ("default", *r[3]), label="the S6.8 tier table")
    p = bounded(oracle.TIER_PRICES, lambda r: tiers.service_tier_multiplier(book, r[0], r[1], r[2], r[3]) == r[4], label="the S6.12 tier prices")
    w = bounded(oracle.CACHE_WRITE_1H, lambda r: tiers.cache_write_1h_multiplier(book, r[0]) == r[1], label="the S6.12 1-hour cache-write prices")
    usages = [tiers.Usage(i, o, r, w5, w1, tier) for i in (0, 7, 10**12) for o in (0, 3) for r in (0, 5) for w5 in (0, 11) for w1 in (0, 13) for tier in (None, "flex", "priority", "fast", "scale")]

    def cost_ok(case: tuple[catalog.CatalogModel, tiers.Usage]) -> bool:
        model, u = case
        rates = dict(model.cost)
        mult_1h = oracle.cache_write_1h_says(model.id)
        rate_1h = rates["cacheWrite"] if mult_1h is None else rates["input"] * mult_1h
        base = (u.input * rates["input"] + u.output * rates["output"] + u.cache_read * rates["cacheRead"] + u.cache_write * rates["cacheWrite"] + u.cache_write_1h * rate_1h) / 1e6
        tier_mult = oracle.tier_multiplier_says(model.provider, model.api, u.service_tier, model.id)
        got = tiers.calculate_cost(book, model, u)
        return abs(got - base * tier_mult) <= 1e-9 * max(1.0, abs(base * tier_mult))

    supported = bounded(
        [(r, tier) for r in oracle.SERVICE_TIERS for tier in ("default", "auto", "scale", "flex", "priority", "fast")],
        lambda c: tiers.supports_service_tier(book, c[0][0], c[0][1], c[0][2], c[1]) == (c[1] == "default" or c[1] in c[0][3]),
        label="supports_service_tier over the S6.8 table x 6 tiers",
    )
    keys = {model.key for model in catalog.compiled()}
    defaults = bounded(
        sorted({model.provider for model in catalog.compiled()} | {"nobody"}),
        lambda provider: (lambda d: (provider != "nobody" or d is None) and (d is None or (provider, d) in keys))(tiers.provider_default_model(book, provider)),
        label="provider_defaults: a listed provider's default is a catalog model of it; unlisted: none",
    )
    cost = bounded(itertools.product(catalog.compiled(), usages), cost_ok, label=f"calculate_cost over every catalog model x {len(usages)} usages (huge counts, every tier)")
    return all_of(t, p, w, supported, defaults, cost)


@law(
    "quirk_caps_unsupported_first",
    "S6.7",
    "A capability the rulebook does not give is Unsupported { capability, provider } before auth; a given one is a dialect that has the operation.",
    BOUNDED,
    derivation="S6.7 items 1 and 4",
)
def quirk_caps_unsupported_first() -> Evidence:
    from eukhe.inference import capabilities, catalog

    book = _shipped()
    keys = {model.provider: quirks.ModelKey(model.id, model.name, model.provider, model.api, model.base_url) for model in catalog.compiled()}
    keys["llama-cpp"] = quirks.ModelKey("local", None, "llama-cpp", "openai-completions", "http://127.0.0.1:8080")
    keys["custom"] = quirks.ModelKey("x", None, "custom", "openai-completions", "https://custom.example")

    def checked(case: tuple[str, str]) -> bool:
        provider, capability = case
        auth: list[str] = []
        try:
            dialect = capabilities.perform(book, keys[provider], capability, lambda: auth.append("auth"), lambda d: d)
        except capabilities.Unsupported as error:
            return auth == [] and (error.capability, error.provider) == (capability, provider)
        return auth == ["auth"] and m.dialect_has(dialect, capability)

    cases = list(itertools.product(sorted(keys), oracle.CAPABILITIES))

    def listed(provider: str) -> bool:
        caps = capabilities.capabilities_of(book, keys[provider])
        if [c.name for c in caps] != list(oracle.CAPABILITIES):
            return False
        for cap in caps:
            try:
                dialect: str | None = capabilities.require(book, keys[provider], cap.name)
            except capabilities.Unsupported:
                dialect = None
            if dialect != cap.dialect:
                return False
        try:
            capabilities.require(book, keys[provider], "teleport")
        except ValueError:
            return True
        return False

    caps_listed = bounded(sorted(keys), listed, label="capabilities_of (eukhe provider caps) agrees with require for every provider; an unknown capability is refused")
    return all_of(caps_listed, bounded(cases, checked, label=f"every provider of the catalog, llama-cpp and a custom one x the {len(oracle.CAPABILITIES)} capabilities")).with_production(_wire_progress())


# S6.7 llama-cpp: "prompt_progress": true -> openai-completions sends "return_progress": true; the
# stream's prompt_progress chunks (total, cache, processed, time_ms) come before the first token;
# model.compat.supportsPromptProgress wins. Over loopback: the llama-cpp provider and another, each
# with no compat and with the compat flag true and false; the flag is read off the body the server
# received, the progress off the reply the client decoded. Progress is not yet the reply: a stream
# cut after progress alone is retried (as a cut before any event) and gives the next attempt's reply.
PROGRESS = (lb.Progress(100, 20, 50, 1.5), lb.Progress(100, 20, 100, 2.0))


def _wire_progress() -> Evidence:
    cases = [(provider, compat) for provider in ("llama-cpp", "loop") for compat in (None, True, False)]
    script = lb.Stream([*PROGRESS, lb.Text("hi")])
    batch: list[tuple[WireModel, WireRequest, lb.Script | tuple[lb.Script, ...]]] = [
        (dataclasses.replace(_wire_model(oracle.API_CHAT, provider=provider), compat=None if compat is None else {"supportsPromptProgress": compat}), WireRequest((WireMessage("user", "go"),)), script)
        for provider, compat in cases
    ]
    batch.append((_wire_model(oracle.API_CHAT, provider="llama-cpp"), WireRequest((WireMessage("user", "go"),)), (lb.Stream([*PROGRESS, lb.Cut()]), script)))
    replies = _wire_exchange(batch)
    want_progress = tuple((p.total, p.cache, p.processed, p.time_ms) for p in PROGRESS)

    def ok(i: int) -> bool:
        recorded, outcome = replies[i]
        provider, compat = cases[i] if i < len(cases) else ("llama-cpp", None)
        flag = compat if compat is not None else provider == "llama-cpp"
        if not isinstance(outcome, WireReply):
            raise LawFailed(f"{provider} {compat}: no reply: {outcome!r}")
        got = tuple((p.total, p.cache, p.processed, p.time_ms) for p in outcome.progress)
        # retried: the cut attempt's progress was shown as it came; the reply's attempt shows its own after it
        return (recorded.body.get("return_progress") is True) == flag and got[-len(want_progress):] == want_progress and len(got) == len(want_progress) * (1 + (i >= len(cases))) and outcome.text == "hi"

    return bounded(range(len(batch)), ok, label="openai-completions over loopback: the llama-cpp provider and another x no compat, supportsPromptProgress true, false; progress then a cut, retried")


@law(
    "quirk_budgets_clamped",
    "S6.13",
    "The thinking budget: the user's thinkingBudgets clamped to the rule's minimal..high; no rule: the user's, else -1 (Google, dynamic) or the thinking_defaults budgets.",
    BOUNDED,
    derivation="S6.13 thinking_budgets and thinking_defaults.budgets",
)
def quirk_budgets_clamped() -> Evidence:
    book = _shipped()
    slots = ("minimal", "low", "medium", "high")
    users: list[dict[str, int] | None] = [None, {}, {"low": 1}, {"high": 10**12}, {"medium": 5000, "minimal": 0}, {"low": -5}]
    models = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro", "custom-model")

    def budget_ok(case: tuple[str, str, dict[str, int] | None, bool]) -> bool:
        model_id, level, user, dynamic = case
        rule: Any = oracle.FAMILY_FACTS["thinking_budgets"].get(model_id)
        slot = slots.index(level) if level in slots else 3
        wanted = None if user is None else user.get(slots[slot])
        if rule is not None:
            want = rule[slot] if wanted is None else max(rule[0], min(rule[3], wanted))
        elif wanted is not None:
            want = wanted
        else:
            want = -1 if dynamic else oracle.DEFAULT_BUDGETS[slot]
        return bool(ladder.thinking_budget(book, quirks.ModelKey(model_id, provider="google"), level, user, dynamic=dynamic) == want)

    cases = list(itertools.product(models, oracle.LADDER[1:], users, (True, False)))
    return bounded(cases, budget_ok, label=f"{len(models)} models (each 2.5 family, a level-family, an unnamed one) x 6 levels x {len(users)} user budgets x dynamic or not")


@law(
    "strict_required_named",
    "S6.4",
    "A strict-required tool past the cap is an error naming the highest-priority such tool (the earlier of equals); none: no error.",
    BOUNDED,
    derivation="S6.4: strict-required tool past cap -> error; several -> names the highest-priority one",
)
def strict_required_named() -> Evidence:
    def cases() -> Iterator[tuple[tuple[m.Tool, ...], int]]:
        for n in range(5):
            for priorities in itertools.product(range(max(n, 1)), repeat=n):
                if set(priorities) != set(range(max(priorities, default=-1) + 1)):
                    continue
                for required in itertools.product((False, True), repeat=n):
                    tools = tuple(m.Tool(f"t{i}", p, r) for i, (p, r) in enumerate(zip(priorities, required)))
                    for cap in range(n + 2):
                        yield tools, cap

    def expected(tools: tuple[m.Tool, ...], cap: int) -> str | None:
        order = sorted(range(len(tools)), key=lambda i: (-tools[i].priority, i))  # the seed's strict order
        past = [i for i in order[cap:] if tools[i].strict_required]
        return tools[past[0]].name if past else None

    def model_ok(case: tuple[tuple[m.Tool, ...], int]) -> bool:
        return m.strict_plan(*case).error == expected(*case)

    def production_ok(case: tuple[tuple[m.Tool, ...], int]) -> bool:
        tools, cap = case
        specs = [constrained.ToolSpec(t.name, t.priority, t.strict_required) for t in tools]
        try:
            plan = constrained.strict_budget(specs, cap)
        except constrained.StrictBudgetError as error:
            return error.tool == expected(tools, cap) and error.tool in str(error)
        order = sorted(range(len(tools)), key=lambda i: (-tools[i].priority, i))
        return expected(tools, cap) is None and plan.strict_names == tuple(tools[i].name for i in sorted(order[:cap]))

    label = "0..4 tools, every weak order of priorities, every strict-required mask, caps 0..n+1"
    prod = bounded(cases(), production_ok, label=f"production strict_budget: {label}")
    try:
        constrained.strict_budget([], -1)
    except ValueError:
        pass
    else:
        raise LawFailed("production accepted a negative strict cap")
    return bounded(cases(), model_ok, label=label).with_production(prod)


@law(
    "force_manual_thinking_unsupported",
    "S6.3",
    "With manual extended thinking, Anthropic Messages and Claude on Bedrock have no native forced choice, and no attempt escalates to a flag.",
    BOUNDED,
    derivation="S6.3: manual extended thinking rejects forced choice -> unsupported, no escalation to an unsent flag",
)
def force_manual_thinking_unsupported() -> Evidence:
    from eukhe.inference import catalog

    apis = catalog.APIS + ("unknown-api",)

    def ok(case: tuple[str, bool, bool, int]) -> bool:
        api, manual, free, retries = case
        supported = force.maps_forced_tool_choice(api, manual)
        want = api in catalog.APIS and not (manual and api in oracle.MANUAL_THINKING_REJECTS)
        flags = [r.forced_choice for r in force.run("t", retries, supported, free, lambda r: r.attempt == retries).requests]
        return supported == want and (supported or not any(flags))

    try:
        force.run("t", -1, True, True, lambda r: True)
    except ValueError:
        pass
    else:
        raise LawFailed("production accepted a negative retry count")
    return bounded(itertools.product(apis, (False, True), (False, True), range(4)), ok, label=f"{len(apis)} wire APIs (and an unknown one) x manual thinking x free x retries 0..3")


@law(
    "quirk_document_refused",
    "S6.1",
    "A rulebook document malformed at any depth is refused, and so is a compat value of the wrong type; the shipped document loads.",
    BOUNDED,
    derivation="S6.1 compile applied to the rulebook document and to explicit model.compat",
)
def quirk_document_refused() -> Evidence:
    import json

    shipped_doc = json.loads(quirks.shipped_text())
    bad = [
        "{",
        "[]",
        '{"version": 2}',
        '{"version": 1, "extra": 1}',
        '{"version": 1, "families": [3]}',
        '{"version": 1, "families": [{"id": "x", "pattern": 3}]}',
        '{"version": 1, "families": [{"id": "x", "pattern": "a", "colour": 1}]}',
        '{"version": 1, "families": [{"id": "x", "pattern": "a", "min": []}]}',
        '{"version": 1, "families": [{"id": "x", "pattern": "a", "min": [-1]}]}',
        '{"version": 1, "families": [{"id": "x", "pattern": "a", "below": [1.5]}]}',
        '{"version": 1, "hosts": [{"id": "h", "urls": "x"}]}',
        '{"version": 1, "hosts": [{"id": "h", "port": 1}]}',
        '{"version": 1, "hosts": [{"id": 1}]}',
        '{"version": 1, "rules": [{"layer": "model", "target": "m"}]}',
        '{"version": 1, "rules": [{"layer": "model", "target": "m", "set": []}]}',
        '{"version": 1, "rules": [{"layer": 1, "target": "m", "set": {}}]}',
    ]

    def refused(text: str) -> bool:
        try:
            quirks.load(text)
        except quirks.RulebookError:
            return True
        return False

    docs = bounded(bad, refused, label=f"{len(bad)} malformed rulebook documents (document, family, host, rule level)")
    compat_cases = [(key, value) for key, directive in quirks.COMPAT_KEYS.items() for value in (None, "x", 1, True, [1], {"a": 1}, -1)]

    def compat_typed(case: tuple[str, Any]) -> bool:
        key, value = case
        directive = quirks.COMPAT_KEYS[key]
        kind = oracle.DIRECTIVES[directive]
        fits = (kind == "bool" and type(value) is bool) or (kind == "int" and type(value) is int and value >= 0) or (kind == "str" and type(value) is str)
        try:
            got = quirks.compat_of({key: value, "unrelated": object()})
        except quirks.QuirksError as error:
            return not fits and error.kind == "WrongType"
        return fits and got == {directive: value}

    compat = bounded(compat_cases, compat_typed, label="every compat key x 7 values of each JSON kind")
    loads = bounded([json.dumps(shipped_doc)], lambda t: quirks.load(t).setting_count > 0, label="the shipped document")
    return all_of(docs, compat, loads)


# `make crosshair`: the model's and production's revision readers (one signature).
CROSSHAIR_PAIRS = [("bend.infer.revision", "eukhe.inference.quirks.revision")]


# =====================================================================================================
# Part 2 (issue 14): the repetition guard (S6.5), the compaction threshold (S6.6), the entries of the
# compiled models, tool calls at stream end (S6.10).
#
# The guard. Its proofs are about the code, through encodings spec.z3gen generates from guard_start,
# guard_feed, guard_run and periods (ties proved). The seed's core keeps, per period p, the count of
# consecutive chunks up to the newest that each equal the chunk p before. For every window k and every
# stream (an array of unbounded integers):
# - the feed lemma: guard_feed's loop over the periods 1..max(1, k / 4) (an invariant induction on it,
#   its paths from ``successors``) counts each period from the held count and ids, keeps the newest ids
#   and gives the least period whose count reaches k - p, else KEPT;
# - the run lemma (mathematics): that count step keeps the longest run of chunks equal to the one p
#   before, and it reaches k - p iff the window of the last k chunks is periodic with period p;
# - the step's effect: guard_feed on chunk i after i chunks (window 0: the state and the chunk kept);
# - guard_run (guard_feed driven from guard_start): an invariant induction on its loop over the chunks
#   (the held ids are the newest, each count the longest run, no earlier chunk ended a periodic
#   window) shows its result is the seed's guard: the first chunk that ends a window of the last k
#   chunks periodic with a period 1..max(1, k / 4), and the shortest such period; else None.
# Each law follows from that by a corollary (mathematics, about any result that is the seed's guard).
# Production (eukhe.inference.guard: lines -> chunks -> ids -> the same step) runs on a bounded domain
# through its byte path.
#
# The threshold. ``infer_threshold_over_exact`` sets the encoding of ``over`` against the seed's own line
# (read by spec.oracles.seed_rules) for every natural window, reserve, margin and token count; the first
# request over each threshold is first_at at limit + 1 and limit - margin + 1 by induction on
# ``first_over``'s loop (a z3 recursive function) over every run of naturals; compact_starts_early is
# proved of the encoding of ``over`` over every run whose growth per request is at most the margin. The
# encodings are tied to the functions on bounded naturals and runs: proved for the encoding.
#
# Tool calls: the classification reads only whether there are calls, whether the stop is length, for
# each leaked call whether it parses and names an offered tool, whether the text is blank and the leak
# notes spent (below LEAK_NOTES or not): these laws enumerate those classes up to 3 calls and 3 leaks,
# so they are bounded; production's scan is driven with real markup of all five families.
# =====================================================================================================

import math  # noqa: E402

from eukhe.inference import entry as prod_entry  # noqa: E402
from eukhe.inference import guard as prod_guard  # noqa: E402
from eukhe.inference import threshold as prod_threshold  # noqa: E402
from eukhe.inference import toolcalls  # noqa: E402

_FEED, _GUARD_RUN, _GUARD_START, _PERIODS = generated(m.guard_feed), generated(m.guard_run), generated(m.guard_start), generated(m.periods)
_GUARD_TIES = [_FEED.tie, _GUARD_RUN.tie, _GUARD_START.tie, _PERIODS.tie]


class _Walk:
    """A generated encoding's loop states as encodings of its function (a claim built from them
    is about its code, and prove replaces them by uninterpreted values in its check that the
    claim depends on the code): the states its body runs the loop again with, and the state the
    function enters it with."""

    def __init__(self, fn: Generated) -> None:
        @encoding(fn.of)
        def successors(**names: Any) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
            return fn.successors(**names)

        @encoding(fn.of)
        def entered(*args: Any) -> dict[str, Any]:
            return fn.entered(*args)

        self.of, self.loop, self.successors, self.entered = fn.of, fn.loop, successors, entered


_FEED_WALK, _RUN_WALK = _Walk(_FEED), _Walk(_GUARD_RUN)
_GUARD = fresh(m.Guard, "g")  # a guard state, any
_STREAM = fresh(tuple[int, ...], "stream")  # a stream of chunk ids, any
_SA, _SL = _STREAM.array, _STREAM.length
_GK, _GC, _GI, _GN, _GP, _GT, _GV = z3.Ints("k c i n p top verdict")
_GLAST = z3.Int("last")
_GQ, _GJ = z3.Ints("q j")  # free in a claim: the claim holds at every q and j
_GC0, _GC1 = z3.Ints("c0 c1")
_QB, _JB, _XB, _NB = z3.Ints("qb jb xb nb")  # bound
_HELD_IDS, _HELD_COUNTS = fresh(tuple[int, ...], "ids"), fresh(tuple[int, ...], "counts")
_RUN_STATE = fresh(m.Guard, "state")  # guard_run's guard, any
_GUARD_INPUTS = [*facts(_GUARD), *facts(_RUN_STATE), *facts(_STREAM), *facts(_HELD_IDS), *facts(_HELD_COUNTS), _GK >= 0]


def _least(a: Any, b: Any) -> Any:
    return z3.If(b < a, b, a)


def _held(g: Any, q: Any) -> Any:
    """The count of period q a guard holds: counts[q - 1], 0 when not stored."""
    return z3.If(q <= g.counts.length, item(g.counts, q - 1), 0)


def _counted(g: Any, c: Any, q: Any) -> Any:
    """The count of period q after chunk c, as guard_feed's loop is claimed to give it: one more
    than the held one when c equals the held chunk q before, else 0."""
    return z3.If(z3.And(q <= g.ids.length, item(g.ids, q - 1) == c), _held(g, q) + 1, 0)


def _first_at(v: Any, upto: Any, cuts: Callable[[Any], Any], q: Any) -> Any:
    """At q: v is KEPT and q in 1..upto - 1 does not cut, or v is in 1..upto - 1, cuts, and q in
    1..v - 1 does not (for every q: v is the least period that cuts, else KEPT)."""
    return z3.And(
        z3.Implies(v == m.KEPT, z3.Implies(z3.And(1 <= q, q < upto), z3.Not(cuts(q)))),
        z3.Implies(v != m.KEPT, z3.And(1 <= v, v < upto, cuts(v), z3.Implies(z3.And(1 <= q, q < v), z3.Not(cuts(q))))),
    )


def _first_all(v: Any, upto: Any, cuts: Callable[[Any], Any]) -> Any:
    return z3.ForAll([_QB], _first_at(v, upto, cuts, _QB))


def _feed_kept(g: Any, c: Any, counts: Items, ids: Items, upto: Any, q: Any, j: Any) -> Any:
    """guard_feed's loop after the periods 1..upto - 1: one count each, that of q is _counted,
    and the ids are c then the held ones (the newest max(1, k / 4) in all)."""
    return z3.And(
        counts.length == upto - 1,
        z3.Implies(z3.And(1 <= q, q < upto), item(counts, q - 1) == _counted(g, c, q)),
        ids.length == 1 + _least(_least(upto - 1, _PERIODS(g.limit) - 1), g.ids.length),
        item(ids, 0) == c,
        z3.Implies(z3.And(1 <= j, j < ids.length), item(ids, j) == item(g.ids, j - 1)),
    )


def _feed_post(g: Any, c: Any, result: Any, q: Any, j: Any) -> Any:
    """What guard_feed gives (at q and j; so for every q and j): the window kept, the ids above,
    the count of every period 1..max(1, k / 4) as _counted says (stored up to one past the held
    ids, 0 past them), and the least period whose count reaches k - p."""
    top = _PERIODS(g.limit)
    last = _least(top, g.ids.length + 1)
    out, verdict = result.item0, result.item1
    return z3.And(
        out.limit == g.limit,
        _feed_kept(g, c, out.counts, out.ids, last + 1, q, j),
        z3.Implies(z3.And(1 <= q, q <= top), _held(out, q) == _counted(g, c, q)),
        _first_at(verdict, top + 1, lambda x: _counted(g, c, x) >= g.limit - x, q),
    )


def _feed_walked(at: dict[str, Any]) -> Any:
    """guard_feed's loop at period p (``_index``, up to one past the held ids) on guard _GUARD and
    chunk _GC: the periods before p are done (their counts and ids as _feed_kept says, the verdict
    the least of them)."""
    p, top, last, st, k = at["_index"], at["top"], at["last"], at["state"], _GUARD.limit
    return z3.And(
        k >= 1, top == _PERIODS(k), last == _least(top, _GUARD.ids.length + 1), 1 <= p, p <= last + 1, at["_stop"] == last + 1, at["chunk"] == _GC,
        st.limit == k, st.ids.array == _GUARD.ids.array, st.ids.length == _GUARD.ids.length,
        st.counts.array == _GUARD.counts.array, st.counts.length == _GUARD.counts.length,
        z3.ForAll([_QB, _JB], _feed_kept(_GUARD, _GC, at["counts"], at["ids"], p, _QB, _JB)),
        _first_all(at["verdict"], p, lambda x: _counted(_GUARD, _GC, x) >= k - x),
    )


def _same_value(a: Any, b: Any) -> Any:
    return z3.And(*[x == y for x, y in zip(_leaves(a), _leaves(b), strict=True)])


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, tuple):
        return [leaf for part in value for leaf in _leaves(part)]
    return [value]


def _invariant(fn: Any, at: dict[str, Any], walked: Callable[[dict[str, Any]], list[Any]], post: Callable[[Any], Any],
               keeps: Callable[[tuple[Any, ...], dict[str, Any]], list[Any]], leaves: Callable[[], list[Any]], what: str) -> Evidence:
    """Induction on ``fn``'s first loop by an invariant (``walked``: it, or instances of it, which
    claims assuming them prove more): where the loop stops it gives
    ``post``; each path of its body that runs it again (``successors``) keeps the invariant
    (``keeps``, the claim from the path's conditions) and the loop's value (its recursive
    function at the successor); a path that leaves it (``leaves``) gives ``post``. The loop ends
    (spec.z3gen proved its measure falls), so the invariant holds and ``post`` holds of its value
    from every state of the invariant."""
    test = fn.successors(**at)[0][0][0]
    base = prove(lambda: z3.Implies(z3.And(z3.Not(test), *walked(at)), post(fn.loop(**at))), label=f"base: the loop stops ({what})",
                 assumptions=_GUARD_INPUTS, ties=_GUARD_TIES)
    parts = [base]
    for n, (conditions, _after) in enumerate(fn.successors(**at)):
        if _feasible(*conditions, *walked(at)):
            parts.append(prove(_at(lambda n: z3.Implies(z3.And(*fn.successors(**at)[n][0]), _same_value(fn.loop(**at), fn.loop(**fn.successors(**at)[n][1]))), n),
                               label=f"path {n}: the loop goes on from its successor ({what})", assumptions=_GUARD_INPUTS, ties=_GUARD_TIES))
            for k, _claim in enumerate(keeps(*fn.successors(**at)[n])):
                parts.append(prove(_at(lambda n, k: keeps(*fn.successors(**at)[n])[k], n, k), label=f"path {n}: the invariant is kept, part {k + 1} ({what})",
                                   assumptions=_GUARD_INPUTS, ties=_GUARD_TIES))
        else:
            parts.append(prove(_at(lambda n: z3.Not(z3.And(*fn.successors(**at)[n][0], *walked(at))), n), label=f"path {n}: never taken from the invariant ({what})", assumptions=_GUARD_INPUTS, ties=_GUARD_TIES))
    for k, _claim in enumerate(leaves()):
        parts.append(prove(_at(lambda k: leaves()[k], k), label=f"a path that leaves the loop gives its result, part {k + 1} ({what})", assumptions=_GUARD_INPUTS, ties=_GUARD_TIES))
    return induction(base, all_of(*parts[1:]), of=fn.of, label=what)


def _at(build: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """A claim built by ``build`` at ``args`` (each when it is built, as prove builds it twice)."""
    return lambda: build(*args)


def _feasible(*conditions: Any) -> bool:
    """Whether a path may be taken (z3 finds its conditions not unsatisfiable): which claim it owes."""
    solver = z3.Solver()
    solver.add(*_GUARD_INPUTS, *conditions)
    return bool(solver.check() != z3.unsat)


def _feed_step(g: Any, c: Any, q: Any, j: Any) -> Any:
    """The feed lemma at a guard and chunk: where guard_feed enters its loop (k >= 1), the loop
    gives _feed_post."""
    return z3.Implies(g.limit >= 1, _feed_post(g, c, _FEED.loop(**_FEED_WALK.entered(g, c)), q, j))


@cache
def _feed_lemma() -> Evidence:
    """guard_feed, for every guard state and chunk (k >= 1): its loop over the periods 1..max(1,
    k / 4) counts each period as _counted says, keeps the newest ids, and its verdict is the least
    period whose count reaches k - p, else KEPT (induction on the loop, at every q and j)."""
    at = {"state": _GUARD, "chunk": _GC, "top": _GT, "last": _GLAST, "ids": _HELD_IDS, "counts": _HELD_COUNTS, "verdict": _GV, "_index": _GP, "_stop": _GLAST + 1}
    def post(out: Any) -> Any:
        return _feed_post(_GUARD, _GC, out, _GQ, _GJ)

    def keeps(conditions: tuple[Any, ...], after: dict[str, Any]) -> list[Any]:
        return [z3.Implies(z3.And(*conditions, _feed_walked(at)), _feed_walked(after))]

    def leaves() -> list[Any]:
        paths = _FEED_WALK.successors(**at)
        return [z3.Implies(paths[0][0][0], z3.Or(*[z3.And(*conditions) for conditions, _after in paths]))]

    loop = _invariant(_FEED_WALK, at, lambda a: [_feed_walked(a)], post, keeps, leaves, "guard_feed's periods 1..max(1, k / 4)")
    entry = prove(
        lambda: z3.Implies(_GUARD.limit >= 1, z3.And(_feed_walked(_FEED_WALK.entered(_GUARD, _GC)), _same_value(_FEED(_GUARD, _GC), _FEED.loop(**_FEED_WALK.entered(_GUARD, _GC))))),
        label="guard_feed (k >= 1) enters its loop at period 1 with no count, its chunk first, KEPT", assumptions=_GUARD_INPUTS, ties=_GUARD_TIES,
    )
    return all_of(loop, entry)


# The seed's words over a stream (S6.5), for a window k and longest period top: the window of the
# last k of the first m chunks is periodic with period q; a cut there.
def _periodic(m_: Any, q: Any) -> Any:
    return z3.And(m_ >= _GK, z3.ForAll([_XB], z3.Implies(z3.And(m_ - _GK + q <= _XB, _XB < m_), _SA[_XB] == _SA[_XB - q])))


def _cut(m_: Any, q: Any, top: Any) -> Any:
    return z3.And(_GK >= 1, 1 <= q, q <= top, _periodic(m_, q))


def _run(c: Any, n: Any, p: Any) -> Any:
    """c is the length of the longest run, ending at the newest of n chunks, of chunks each equal
    to the chunk p before (the seed's count of period p)."""
    return z3.And(
        c >= 0, c <= z3.If(n - p > 0, n - p, 0),
        z3.ForAll([_XB], z3.Implies(z3.And(n - c <= _XB, _XB < n), _SA[_XB] == _SA[_XB - p])),
        z3.Implies(c < n - p, _SA[n - c - 1] != _SA[n - c - 1 - p]),
    )


def _stepped(g: Any, q: Any, i: Any) -> Any:
    """The seed's count of period q after chunk i, from the count g holds."""
    return z3.If(z3.And(q <= i, _SA[i - q] == _SA[i]), _held(g, q) + 1, 0)


def _run_kept(c0: Any, c1: Any, n: Any, p: Any) -> Any:
    """The count step (c0 to c1 on chunk n) keeps the longest run, and c1 reaches k - p iff the
    window of the last k chunks is periodic with period p (p < k, or p = 1)."""
    return z3.Implies(
        z3.And(p >= 1, n >= 0, _run(c0, n, p), c1 == z3.If(z3.And(p <= n, _SA[n - p] == _SA[n]), c0 + 1, 0)),
        z3.And(_run(c1, n + 1, p), z3.Implies(z3.And(_GK >= 1, z3.Or(p < _GK, p == 1)), (c1 >= _GK - p) == _periodic(n + 1, p))),
    )


@cache
def _run_lemma() -> Evidence:
    return lemma(lambda: _run_kept(_GC0, _GC1, _GN, _GP), label="the count step keeps the longest run of chunks equal to the one p before, which reaches k - p iff the last k chunks are periodic with period p (mathematics, every stream)")


def _ids_held(i: Any, g: Any, j: Any) -> Any:
    """After i chunks of the stream (at j; so for every j): g holds window k and the newest min(i,
    max(1, k / 4)) ids, newest first."""
    top = _PERIODS(_GK)
    return z3.And(g.limit == _GK, 0 <= i, z3.Implies(_GK >= 1, z3.And(
        g.ids.length == _least(i, top), z3.Implies(z3.And(0 <= j, j < g.ids.length), item(g.ids, j) == _SA[i - 1 - j]))))


def _counts_held(i: Any, g: Any, q: Any) -> Any:
    """After i chunks (at q; so for every q): the count g holds of period q is the longest run."""
    return z3.Implies(z3.And(_GK >= 1, 1 <= q, q <= _PERIODS(_GK)), _run(_held(g, q), i, q))


def _inv(i: Any, g: Any, q: Any, j: Any) -> Any:
    """After i chunks of the stream (at q and j; so for every q and j): the ids and the counts held."""
    return z3.And(_ids_held(i, g, j), _counts_held(i, g, q))


def _effects(i: Any, g: Any, c: Any, q: Any, j: Any) -> list[tuple[str, list[Any], Any]]:
    """guard_feed on chunk c = stream[i] after i chunks, part by part: what each part needs (the
    invariant where the part reads it, the chunk, the feed lemma at q and j) and what it gives.
    Window 0 keeps the state and the chunk; else the counts are the seed's step, the ids the
    newest, the verdict the least period whose count reaches k - p."""
    out = _FEED(g, c)
    after, verdict = out.item0, out.item1
    top = _PERIODS(_GK)
    fed = _feed_step(g, c, q, j)
    chunk = [c == _SA[i], 0 <= i, i < _SL]
    return [
        ("window 0: the state and the chunk kept", [g.limit == _GK], z3.Implies(_GK == 0, z3.And(_same_value(after, g), verdict == m.KEPT))),
        ("the count of q is the seed's step", [_ids_held(i, g, q - 1), *chunk, fed],
         z3.Implies(_GK >= 1, z3.And(after.limit == _GK, z3.Implies(z3.And(1 <= q, q <= top), _held(after, q) == _stepped(g, q, i))))),
        ("the ids are the newest, newest first", [_ids_held(i, g, j - 1), *chunk, fed],
         z3.Implies(_GK >= 1, z3.And(after.ids.length == _least(i + 1, top), z3.Implies(z3.And(0 <= j, j < after.ids.length), item(after.ids, j) == _SA[i - j])))),
        ("the verdict is the least period whose count reaches k - p", [_ids_held(i, g, q - 1), _ids_held(i, g, verdict - 1), *chunk, fed],
         z3.Implies(_GK >= 1, _first_at(verdict, top + 1, lambda x: _stepped(g, x, i) >= _GK - x, q))),
    ]


def _loop_values_free(claim: Any) -> Any:
    """``claim`` with each value of guard_feed's loop (an application of its recursive functions)
    replaced by a free constant: a claim for every value in its place, so for the loop's (the
    facts it needs of them are its premises, from the feed lemma). z3 then never unfolds that
    loop for a claim that does not need it, where unfolding it can run past the time limit."""
    found: dict[int, tuple[Any, Any]] = {}

    def walk(term: Any) -> None:
        if z3.is_app(term) and term.decl().name().startswith(f"{m.guard_feed.__module__}.{m.guard_feed.__qualname__}:loop@"):
            found.setdefault(term.get_id(), (term, z3.Const(f"guard_feed's loop value #{term.get_id()}", term.sort())))
            return
        for child in term.children():
            walk(child)

    walk(claim)
    return z3.substitute(claim, *found.values()) if found else claim


@cache
def _effect_proof() -> Evidence:
    parts = [
        prove(_at(lambda n: _loop_values_free(z3.Implies(z3.And(*_effects(_GI, _GUARD, _GC, _GQ, _GJ)[n][1]), _effects(_GI, _GUARD, _GC, _GQ, _GJ)[n][2])), n),
              label=f"guard_feed on stream[i] after i chunks: {said}", assumptions=_GUARD_INPUTS, ties=_GUARD_TIES)
        for n, (said, _needs, _gives) in enumerate(_effects(_GI, _GUARD, _GC, _GQ, _GJ))
    ]
    return all_of(*parts)


_RUN_AT = {"limit": _GK, "stream": _STREAM, "state": _RUN_STATE, "i": _GI}
_RUN_CHUNK = z3.Select(_SA, z3.If(_GI < 0, _GI + _SL, _GI))  # stream[i] as the code reads it


def _run_walked_parts(at: dict[str, Any], q: Any, j: Any, n: Any) -> list[Any]:
    """guard_run's loop after i chunks (at q, j, n; so for every q, j, n): i within the stream, the
    ids and the counts held, and no chunk before i ended a periodic window."""
    i, g = at["i"], at["state"]
    return [
        z3.And(at["limit"] == _GK, 0 <= i, i <= _SL, _ids_held(i, g, j)),
        _counts_held(i, g, q),
        z3.Implies(z3.And(0 <= n, n < i), z3.Not(_cut(n + 1, q, _PERIODS(_GK)))),
    ]


def _run_walked(at: dict[str, Any], q: Any, j: Any, n: Any) -> Any:
    return z3.And(*_run_walked_parts(at, q, j, n))


def _run_walked_all(at: dict[str, Any]) -> Any:
    return z3.ForAll([_QB, _JB, _NB], _run_walked(at, _QB, _JB, _NB))


def _step_read(at: dict[str, Any], part: str) -> list[Any]:
    """What one part of the step reads, at free q, j, n: the invariant at ``at`` where it is read
    (instances of _run_walked_all) and the proved facts at the loop's guard and chunk (the step's
    effect, the feed lemma, the run lemma at period q and at the verdict)."""
    i, g, chunk = at["i"], at["state"], _RUN_CHUNK
    q, j, n = _GQ, _GJ, _GN
    v = _FEED(g, chunk).item1
    window0, count, ids, verdict = [z3.Implies(z3.And(*needs), gives) for _said, needs, gives in _effects(i, g, chunk, q, j)]
    walked = _run_walked_parts(at, q, j, n)
    ids_at = [_run_walked_parts(at, q, j - 1, n)[0], _run_walked_parts(at, q, q - 1, n)[0], _run_walked_parts(at, q, v - 1, n)[0]]
    fed = _feed_step(g, chunk, q, j)
    if part == "ids":
        return [walked[0], *ids_at, window0, ids, fed]
    runs = [walked[1], _run_kept(_held(g, q), _stepped(g, q, i), i, q)]
    if part == "counts":
        return [walked[0], *ids_at, window0, count, fed, *runs]
    at_verdict = [_run_walked_parts(at, v, j, n)[1], _run_kept(_held(g, v), _stepped(g, v, i), i, v)]
    return [*walked, *ids_at, window0, verdict, fed, *runs, *at_verdict]


def _seed_guard(r: Any, q: Any, n: Any, top: Any) -> Any:
    """S6.5 at q and n (so for every q and n): r is None and no chunk ends a periodic window, or r
    is (index, period): the first chunk that ends one, and the shortest period of it."""
    index, period = r.value.item0, r.value.item1
    return z3.If(
        r.none,
        z3.Implies(z3.And(0 <= n, n < _SL), z3.Not(_cut(n + 1, q, top))),
        z3.And(
            0 <= index, index < _SL, period != m.KEPT, _cut(index + 1, period, top),
            z3.Implies(z3.And(1 <= q, q < period), z3.Not(_cut(index + 1, q, top))),
            z3.Implies(z3.And(0 <= n, n < index), z3.Not(_cut(n + 1, q, top))),
        ),
    )


@cache
def _guard_run_proof() -> Evidence:
    """guard_run(k, stream) is the seed's guard, for every window k >= 0 and every stream: an
    invariant induction on its loop over the chunks, each step guard_feed's code (the feed lemma,
    the step's effect and the run lemma at the points the step reads)."""
    at = _RUN_AT
    def post(r: Any) -> Any:
        return _seed_guard(r, _GQ, _GN, _PERIODS(_GK))

    def keeps(conditions: tuple[Any, ...], after: dict[str, Any]) -> list[Any]:
        goals = _run_walked_parts(after, _GQ, _GJ, _GN)
        return [_loop_values_free(z3.Implies(z3.And(*conditions, *_step_read(at, part)), goal)) for part, goal in zip(("ids", "counts", "windows"), goals, strict=True)]

    def leaves() -> list[Any]:
        """The path that cuts: the result is (i, the verdict), part by part of the seed's guard,
        each from what it reads."""
        paths = _RUN_WALK.successors(**at)
        leaving = [paths[0][0][0], z3.Not(z3.Or(*[z3.And(*conditions) for conditions, _after in paths]))]
        r = _GUARD_RUN.loop(**at)
        index, period, top = r.value.item0, r.value.item1, _PERIODS(_GK)
        read = _step_read(at, "windows")
        walked, at_verdict = read[:3], read[-2:]
        ids_at, window0, verdict, fed, runs = read[3:6], read[6], read[7], read[8], read[9:11]
        return [
            z3.Implies(z3.And(*leaving, walked[0]), z3.And(z3.Not(r.none), index == at["i"], 0 <= index, index < _SL)),
            z3.Implies(z3.And(*leaving, walked[0], *ids_at, window0, verdict, fed, *at_verdict), z3.And(period != m.KEPT, _cut(index + 1, period, top))),
            z3.Implies(z3.And(*leaving, walked[0], *ids_at, window0, verdict, fed, *runs), z3.Implies(z3.And(1 <= _GQ, _GQ < period), z3.Not(_cut(index + 1, _GQ, top)))),
            z3.Implies(z3.And(*leaving, walked[0], walked[2]), z3.Implies(z3.And(0 <= _GN, _GN < index), z3.Not(_cut(_GN + 1, _GQ, top)))),
        ]

    loop = _invariant(_RUN_WALK, at, lambda a: _run_walked_parts(a, _GQ, _GJ, _GN), post, keeps, leaves, "guard_run's chunks")
    entry = prove(
        lambda: z3.And(_run_walked_all(_RUN_WALK.entered(_GK, _STREAM)), _same_value(_GUARD_RUN(_GK, _STREAM), _GUARD_RUN.loop(**_RUN_WALK.entered(_GK, _STREAM)))),
        label="guard_run enters its loop at chunk 0 with guard_start(k): nothing held, no count",
        assumptions=_GUARD_INPUTS, ties=_GUARD_TIES,
    )
    return all_of(loop, entry)


@cache
def _periods_proof() -> Evidence:
    wide = z3.If(_GK > 4, _GK, 4)  # max(4, k): the longest period p is the one with 4p <= max(4, k) < 4p + 4
    return prove(lambda: z3.And(_PERIODS(_GK) >= 1, 4 * _PERIODS(_GK) <= wide, wide < 4 * _PERIODS(_GK) + 4),
                 label="periods(k) is the seed's k / 4, at least 1 (4 p <= max(4, k) < 4 p + 4), for every natural k",
                 assumptions=[_GK >= 0], ties=_GUARD_TIES)


def _guard_proof() -> Evidence:
    """For every window k and every stream, about the code: guard_feed's loop (the feed lemma),
    its effect on a chunk after the chunks before it (the counts are the seed's longest runs, the
    verdict the shortest periodic window), guard_run driving it from guard_start (the seed's
    guard), and periods (the seed's max(1, k / 4))."""
    return all_of(_feed_lemma(), _run_lemma(), _effect_proof(), _guard_run_proof(), _periods_proof())


_R = fresh(tuple[int, int] | None, "r")  # a result of guard_run, any: for the laws' corollaries (mathematics)
_FREE_TOP = z3.Int("longest period")


def _corollary(claim: Callable[[], Any], label: str) -> Evidence:
    """What a law says of a result that is the seed's guard (mathematics, about no code; its premise
    _seed_guard at the q and n it reads, which _guard_proof proves of guard_run's result at every q
    and n, its longest period periods(k) >= 1): with _guard_proof, the law of guard_run."""
    return lemma(claim, label=label, assumptions=[*facts(_STREAM), _FREE_TOP >= 1])


GUARD_KS = tuple(range(1, 10))
GUARD_STREAMS = "k = 1..9 x every stream over 3 ids of length 0..7 and over 2 ids of length 8..10"


@cache
def _guard_domain() -> tuple[tuple[int, tuple[int, ...]], ...]:
    streams = [s for n in range(8) for s in itertools.product(range(3), repeat=n)]
    streams += [s for n in range(8, 11) for s in itertools.product(range(2), repeat=n)]
    return tuple((k, s) for k in GUARD_KS for s in streams)


def _guard_streams() -> Iterator[tuple[int, tuple[int, ...]]]:
    yield from _guard_domain()


@cache
def _long_streams() -> list[tuple[int, tuple[int, ...]]]:
    """Longer streams: periods 1, 2, 3, k / 4, k / 4 + 1 and 20 cycled past k for k in 4, 8, 16, 32,
    64, each whole and with one chunk broken at 6 places of its first 2k chunks, and the seed's
    7-line loop after 13 lines."""
    out: list[tuple[int, tuple[int, ...]]] = [(64, tuple(range(13)) + tuple(13 + i % 7 for i in range(1359)))]
    for k in (4, 8, 16, 32, 64):
        for p in sorted({1, 2, 3, k // 4, k // 4 + 1, 20}):
            cycle = tuple(100 + i % p for i in range(2 * k + p))
            out.append((k, cycle))
            for hole in range(0, 2 * k, max(1, k // 3)):
                out.append((k, cycle[:hole] + (7,) + cycle[hole + 1 :]))
    return out


@cache
def _model_runs() -> dict[tuple[int, tuple[int, ...]], tuple[int, int] | None]:
    return {c: m.guard_run(*c) for c in itertools.chain(_guard_streams(), _long_streams())}


@cache
def _production_runs() -> dict[tuple[int, tuple[int, ...]], tuple[int, int] | None]:
    cases = [c for c in _guard_streams() if len(c[1]) <= 7 and c[0] <= 6] + _long_streams()
    return {c: _production_guard_run(*c) for c in cases}


def _production_guard_run(k: int, stream: tuple[int, ...]) -> tuple[int, int] | None:
    guard = prod_guard.Guard(k)
    for i, chunk in enumerate(stream):
        if i % 2:
            cut = guard.feed("thinking", f"line {chunk}\n")
        else:
            guard.feed("text", f"line {chunk}")
            cut = guard.feed("text", "\n")
        if cut is not None:
            return i, cut.period
    return None


def _guard_on_streams(prop: Any, what: str) -> Evidence:
    """``prop(k, stream, got)`` on the model's step driven over every stream of the domain and the long
    cycles, and on production (its byte path) over the same."""
    runs = _model_runs()
    model = bounded(runs, lambda c: prop(c[0], c[1], runs[c]), label=f"{GUARD_STREAMS} and the long cycles ({what})")
    made = _production_runs()
    prod = bounded(made, lambda c: prop(c[0], c[1], made[c]), label=f"production Guard.feed (chunks as lines of two interleaved blocks): k = 1..6 x streams over 3 ids of length 0..7, and the long cycles ({what})")
    return model.with_production(prod)


@law("guard_cuts_repeats", "S6.5", "One chunk k times in a row: the guard cuts (at the latest at its k-th time, with period 1).", PROVED)
def guard_cuts_repeats() -> Evidence:
    """Proved about the code for every window k >= 1 and every stream (_guard_proof): guard_run is
    the seed's guard; k equal chunks ending at chunk n make the window ending there periodic with
    period 1, so the first cut is at n or before, and at n with the shortest period, 1."""
    def prop(k: int, stream: tuple[int, ...], got: tuple[int, int] | None) -> bool:
        run = next((n for n in range(k - 1, len(stream)) if len(set(stream[n - k + 1 : n + 1])) == 1), None)
        return run is None or (got is not None and got[0] <= run and (got[0] < run or got[1] == 1))

    n, k = _GN, _GK
    same = z3.ForAll([_XB], z3.Implies(z3.And(n - k + 1 <= _XB, _XB <= n), _SA[_XB] == _SA[n]))
    repeats = _corollary(
        lambda: z3.Implies(z3.And(_seed_guard(_R, z3.IntVal(1), n, _FREE_TOP), k >= 1, k - 1 <= n, n < _SL, same), z3.And(z3.Not(_R.none), _R.value.item0 <= n, z3.Implies(_R.value.item0 == n, _R.value.item1 == 1))),
        "k equal chunks ending at chunk n: the seed's guard cuts by n, at n with period 1 (every k >= 1, every stream)",
    )
    return also(all_of(_guard_proof(), repeats), _guard_on_streams(prop, "k equal chunks -> cut by then"))


@law("guard_cuts_loops", "S6.5", "A window of the last k chunks periodic with a period 1..max(1, k / 4): the guard cuts (by then).", PROVED)
def guard_cuts_loops() -> Evidence:
    def prop(k: int, stream: tuple[int, ...], got: tuple[int, int] | None) -> bool:
        want = oracle.guard_says(k, stream)
        return want is None or (got is not None and got[0] <= want[0])

    loops = _corollary(
        lambda: z3.Implies(z3.And(_seed_guard(_R, _GQ, _GN, _FREE_TOP), 0 <= _GN, _GN < _SL, _cut(_GN + 1, _GQ, _FREE_TOP)), z3.And(z3.Not(_R.none), _R.value.item0 <= _GN)),
        "the window ending at chunk n periodic with a period 1..max(1, k / 4): the seed's guard cuts by n",
    )
    return also(all_of(_guard_proof(), loops), _guard_on_streams(prop, "a periodic window -> cut by then"))


@law("guard_keeps_others", "S6.5", "No such window: the guard does not cut.", PROVED)
def guard_keeps_others() -> Evidence:
    """Proved about the code for every window k (0, the guard off, derived: the seed gives no
    meaning to a window of no chunks, included: no window of it cuts) and every stream."""
    def prop(k: int, stream: tuple[int, ...], got: tuple[int, int] | None) -> bool:
        return got is not None or oracle.guard_says(k, stream) is None

    def off(stream: tuple[int, ...]) -> bool:
        return m.guard_run(0, stream) is None and _production_guard_run(0, stream) is None

    index, period = _R.value.item0, _R.value.item1
    none = z3.Implies(z3.And(0 <= index, index < _SL), z3.Not(_cut(index + 1, period, _FREE_TOP)))  # no chunk ends a periodic window, read at the result's
    kept = _corollary(lambda: z3.Implies(z3.And(_seed_guard(_R, _GQ, _GN, _FREE_TOP), none), _R.none), "no chunk ends a periodic window: the seed's guard never cuts")
    zero = bounded(itertools.chain.from_iterable(itertools.product(range(2), repeat=n) for n in range(9)), off, label="a window of 0 (the guard off, derived) never cuts, model and production: every stream over 2 ids up to length 8")
    return also(all_of(_guard_proof(), kept), zero, _guard_on_streams(prop, "no periodic window -> kept"))


@law("infer_guard_start_exact", "S6.5", "The compiled guard starts with nothing read: every count 0, so its first verdicts are the seed's.", PROVED)
def infer_guard_start_exact() -> Evidence:
    ks = [*range(0, 300), 2**31, prod_guard.U32]
    model = bounded(ks, lambda k: m.guard_start(k) == m.Guard(k, (), ()), label="guard_start(k) holds no id and no count: k = 0..299, 2^31, 2^32 - 1")
    start = prove(
        lambda: z3.And(_GUARD_START(_GK).limit == _GK, _GUARD_START(_GK).ids.length == 0, _GUARD_START(_GK).counts.length == 0, _inv(z3.IntVal(0), _GUARD_START(_GK), _GQ, _GJ)),
        label="guard_start(k) holds window k, no id and no count: every count 0, the longest run of no chunks (every natural k)",
        assumptions=_GUARD_INPUTS, ties=_GUARD_TIES,
    )

    def prod(k: int) -> bool:
        guard = prod_guard.Guard(k)
        return guard.chunks_read == 0 and guard.cut is None and guard.feed("text", "x\n") is (None if k > 1 else guard.cut)

    production = bounded(ks, prod, label="production Guard(k): nothing read; the first chunk cuts only when k = 1 (k = 0..299, 2^31, 2^32 - 1)")
    return also(all_of(start, _guard_proof()), model).with_production(production)


@law("infer_guard_feed_exact", "S6.5", "The compiled step cuts with the shortest period p <= max(1, k / 4) whose newest k - p chunks each equal the chunk p before; else it keeps the chunk.", PROVED)
def infer_guard_feed_exact() -> Evidence:
    """Proved about the code: the step after i chunks (every state the steps driven from
    guard_start reach: guard_run's invariant) counts per period the longest run of chunks each
    equal to the one p before (the run lemma), and its verdict is the shortest period whose count
    reaches k - p, which is the shortest whose window of the last k chunks is periodic, else kept
    (the step's effect, the feed lemma)."""
    def pointwise(case: tuple[int, tuple[int, ...]]) -> bool:
        k, stream = case
        state = m.guard_start(k)
        for n, chunk in enumerate(stream):
            state, verdict = m.guard_feed(state, chunk)
            seen = stream[: n + 1]
            want = oracle.guard_says(k, seen)
            expected = want[1] if want is not None and want[0] == n else m.KEPT
            if verdict != expected:
                return False
            if verdict != m.KEPT:
                return True
        return True

    verdicts = bounded(_guard_streams(), pointwise, label=f"each step's verdict = the oracle's window rule: {GUARD_STREAMS}")
    made = _production_runs()
    prod = bounded(made, lambda c: made[c] == oracle.guard_says(*c), label="production Guard.feed: its cut (chunk and period) is the oracle's: k = 1..6 x streams over 3 ids of length 0..7, and the long cycles")
    return also(_guard_proof(), verdicts).with_production(prod)


@law("infer_guard_steps", "S6.5", "The compiled step driven over a stream is the guard: the first cut and its period are the seed's.", PROVED)
def infer_guard_steps() -> Evidence:
    """Proved about the code for every window k and every stream: guard_run (guard_feed driven
    from guard_start) gives None where no chunk ends a window of the last k chunks periodic with
    a period 1..max(1, k / 4), else the first such chunk and its shortest period (_seed_guard)."""
    return also(_guard_proof(), _guard_on_streams(lambda k, s, got: got == oracle.guard_says(k, s), "driven steps = the oracle's guard"))


# -- the compaction threshold (S6.6) ------------------------------------------------------------------

_VERDICT = {word: z3.StringVal(word) for word in (m.NO_COMPACTION, m.BACKGROUND, m.BLOCKING)}
NONE_CODE, BACKGROUND_CODE, BLOCKING_CODE = _VERDICT[m.NO_COMPACTION], _VERDICT[m.BACKGROUND], _VERDICT[m.BLOCKING]
_z3_over = generated(m.over)  # from the model's code (spec.z3gen)


_THRESHOLD_VALUES = (0, 1, 2, 3, 5, 8)
OVER_CASES = "enabled x window, reserve, margin in {0,1,2,5} x tokens in {0,1,2,3,5,8,13}"


@cache
def _over_oracle() -> Evidence:
    small = (0, 1, 2, 5)
    cases = itertools.product((False, True), small, small, small, (*_THRESHOLD_VALUES, 13))
    return bounded(cases, lambda c: m.over(*c) == oracle.over_says(*c), label=f"over = the seed's rule read from its line (spec.oracles.seed_rules) on {OVER_CASES}")


# first_over's encoding generated from its code: its loop is a z3 recursive function of the names
# bound before it (spec.z3gen), which z3 unfolds and simplify evaluates on closed terms.
_FIRST_OVER = generated(m.first_over)


def _first_over_from(i: Any, window: Any, reserve: Any, margin: Any, run: Items, blocking: bool) -> Any:
    """bend.infer.first_over's loop entered at request i of ``run``, the check on: the first
    request from i the check sends to compaction (blocking only, or either), else None (a Maybe)."""
    return _FIRST_OVER.loop(i=i, enabled=z3.BoolVal(True), window=window, reserve=reserve, margin=margin, run=run, blocking=z3.BoolVal(blocking))


RUN_VALUES = (0, 4, 8, 11, 12)
THRESHOLD_RUNS = "window 12, reserve {0,1,3}, margin {0,1,2,5}, every run of 0..4 requests over tokens {0,4,8,11,12}"


def _production_over(c: tuple[bool, int, int, int, int]) -> str:
    enabled, window, reserve, margin, tokens = c
    return prod_threshold.over(prod_threshold.Policy(enabled, window, float(reserve), prod_threshold.BackgroundMargin.fixed(margin)), tokens)


@law("infer_threshold_over_exact", "S6.6", "The compiled threshold: off or window 0: none; tokens + reserve > window: blocking; else margin > 0 and tokens + reserve + margin > window: background.", PROVED)
def infer_threshold_over_exact() -> Evidence:
    """The claim is the seed's line itself: its clauses, read by spec.oracles.seed_rules, give each
    verdict exactly where bend.infer.over does, for every natural window, reserve, margin and
    token count: over's encoding is generated from its code (spec.z3gen), so this is proved of
    the function."""
    e = z3.Bool("enabled")
    w, r, g, t = z3.Ints("window reserve margin tokens")
    rule = oracle.over_rule()
    env = oracle.over_env(e, w, r, g, t)

    def claim() -> Any:
        verdict = _z3_over(e, w, r, g, t)
        return z3.And(*[(verdict == _VERDICT[word]) == rule.gives(word, env, otherwise=oracle.OVER_OTHERWISE) for word in oracle.OVER_RESULTS])

    proof = prove(claim, label="every natural window, reserve, margin, tokens: each verdict where the seed's clauses give it", assumptions=[w >= 0, r >= 0, g >= 0, t >= 0], ties=[_z3_over.tie])
    big = (0, 1, 2**32, 10**14 - 1, 10**14)
    cases = list(itertools.product((False, True), (*_THRESHOLD_VALUES, *big), (0, 1, 3, 10**14), (0, 2, 10**14), (0, 1, 2, 5, 13, 10**14)))
    prod = bounded(cases, lambda c: _production_over(c) == oracle.over_says(*c), label="production threshold.over (whole reserve and margin, windows up to 10^14): 2 x 12 x 4 x 3 x 6 cases")

    def percent(c: tuple[int, float]) -> bool:
        window, pct = c
        t = prod_threshold.threshold_for(prod_threshold.Policy(True, window, 0.0, prod_threshold.BackgroundMargin.window_percent(pct)))
        share = window * pct / 100
        want = 0 if math.isnan(share) or share <= 0 else prod_threshold.SATURATE if share >= prod_threshold.SATURATE else math.ceil(share)
        return t.margin == want and t.limit == window and t.background == window - want

    percents = bounded(itertools.product((0, 1, 7, 1000, 200_000, 10**14), (0.0, 10.0, 12.5, 33.3, 100.0, float("nan"), -5.0, float("inf"))), percent, label="BackgroundMargin as whole tokens: a percent of the window rounded up; NaN and negatives 0; past 10^14 saturates")
    return also(proof, _over_oracle()).with_production(all_of(prod, percents))


def _runs_of() -> Iterator[tuple[int, int, int, tuple[int, ...]]]:
    for reserve, margin in itertools.product((0, 1, 3), (0, 1, 2, 5)):
        for n in range(5):
            for run in itertools.product(RUN_VALUES, repeat=n):
                yield 12, reserve, margin, run


def _production_first(window: int, reserve: int, margin: int, run: tuple[int, ...]) -> tuple[int | None, int | None]:
    r = prod_threshold.Run(prod_threshold.Policy(True, window, float(reserve), prod_threshold.BackgroundMargin.fixed(margin)))
    for tokens in run:
        r.request(tokens)
    return r.first_blocking, r.first_background


def _first_at_induction(blocking: bool, what: str) -> Evidence:
    """Induction on first_over's loop, from the end of the run back to its first request: from
    request i, the first request sent to compaction (blocking only, or either) is the first whose
    tokens reach ``at`` (first_at, as the seed defines it: the first request reaching it, else
    none), with ``at`` = limit + 1 for blocking and limit - margin + 1 for either. Every run of n
    naturals, every window >= 1, reserve and margin; the loop's encoding is generated from
    bend.infer.first_over's code."""
    run = fresh(tuple[int, ...], "run")
    w, r, g, i, j = z3.Ints("window reserve margin i j")
    at = (w - r) + 1 if blocking else (w - r) - g + 1

    def first(start: Any) -> Any:
        return _first_over_from(start, w, r, g, run, blocking)

    assumptions = [w >= 1, r >= 0, g >= 0, *facts(run), z3.ForAll([j], run.array[j] >= 0)]
    base = prove(lambda: _reaches_first(run, at, run.length, first(run.length)), label=f"base: past the last request, none ({what})", assumptions=assumptions, ties=[_FIRST_OVER.tie])
    step = prove(
        lambda: z3.Implies(z3.And(i >= 0, i < run.length, _reaches_first(run, at, i + 1, first(i + 1))), _reaches_first(run, at, i, first(i))),
        label=f"step: from request i, it is i if its verdict sends it ({what}), else the first from i + 1",
        assumptions=assumptions,
        ties=[_FIRST_OVER.tie],
    )
    return induction(base, step, of="bend.infer.first_over", label=f"the requests of a run, from the last back to the first ({what})")


def _reaches_first(run: Items, at: Any, start: Any, got: Maybe) -> Any:
    """The seed's first_at from request ``start``: ``got`` is the first request of the run from
    ``start`` whose tokens reach ``at``, or None when none does."""
    j = z3.Int("j")
    return z3.Or(
        z3.And(got.none, z3.ForAll([j], z3.Implies(z3.And(start <= j, j < run.length), run.array[j] < at))),
        z3.And(
            z3.Not(got.none), start <= got.value, got.value < run.length, run.array[got.value] >= at,
            z3.ForAll([j], z3.Implies(z3.And(start <= j, j < got.value), run.array[j] < at)),
        ),
    )


@law("infer_threshold_blocks_steps", "S6.6", "Over a run, the first request over the limit (blocking) is first_at at limit + 1.", PROVED)
def infer_threshold_blocks_steps() -> Evidence:
    proof = _first_at_induction(True, "blocking: first_at at limit + 1")

    def model_ok(c: tuple[int, int, int, tuple[int, ...]]) -> bool:
        window, reserve, margin, run = c
        return m.first_over(True, window, reserve, margin, run, True) == oracle.first_at_says(run, window - reserve + 1) == m.first_at(run, window - reserve + 1)

    model = bounded(_runs_of(), model_ok, label=THRESHOLD_RUNS)
    prod = bounded(_runs_of(), lambda c: _production_first(*c)[0] == oracle.first_at_says(c[3], c[0] - c[1] + 1), label=f"production Run: {THRESHOLD_RUNS}")
    return also(proof, model).with_production(prod)


@law("infer_threshold_early_steps", "S6.6", "Over a run, the first request over the threshold (background or blocking) is first_at at limit - margin + 1.", PROVED)
def infer_threshold_early_steps() -> Evidence:
    proof = _first_at_induction(False, "background or blocking: first_at at limit - margin + 1")

    def model_ok(c: tuple[int, int, int, tuple[int, ...]]) -> bool:
        window, reserve, margin, run = c
        return m.first_over(True, window, reserve, margin, run, False) == oracle.first_at_says(run, window - reserve - margin + 1)

    model = bounded(_runs_of(), model_ok, label=THRESHOLD_RUNS)
    prod = bounded(_runs_of(), lambda c: _production_first(*c)[1] == oracle.first_at_says(c[3], c[0] - c[1] - c[2] + 1), label=f"production Run: {THRESHOLD_RUNS}")
    return also(proof, model).with_production(prod)


@law("compact_starts_early", "S6.6", "When a turn grows the context by at most the margin, compaction starts before any turn over the limit.", PROVED)
def compact_starts_early() -> Evidence:
    """Derived precondition: the run starts at or under the limit (a first request already over it
    blocks at once; nothing can come before it). Proved of bend.infer.first_over in three parts:
    by induction on its loop (its encoding generated from its code), the first request it sends
    to blocking compaction is the first reaching limit + 1, and the first it sends to either is
    the first reaching limit - margin + 1 (the two threshold laws); and, a lemma of arithmetic,
    in a run growing by at most the margin per request whose first request is under the limit,
    some request before the first reaching limit + 1 reaches limit - margin + 1."""
    run = fresh(tuple[int, ...], "run")
    w, r, g, j = z3.Ints("window reserve margin j")
    blocks, early = fresh(int | None, "blocks"), fresh(int | None, "early")
    limit = w - r
    growth = z3.ForAll([j], z3.Implies(z3.And(j >= 1, j < run.length), run.array[j] - run.array[j - 1] <= g))
    arithmetic = lemma(
        lambda: z3.Implies(
            z3.And(_reaches_first(run, limit + 1, 0, blocks), _reaches_first(run, limit - g + 1, 0, early), growth, run.array[0] <= limit, g > 0),
            z3.Or(blocks.none, z3.And(z3.Not(early.none), early.value < blocks.value)),
        ),
        label="a run growing by <= margin per request from under the limit reaches limit - margin + 1 before limit + 1",
        assumptions=[w >= 1, r >= 0, g >= 0, *facts(run), z3.ForAll([j], run.array[j] >= 0)],
    )
    proof = all_of(
        _first_at_induction(True, "blocking: first_at at limit + 1"),
        _first_at_induction(False, "background or blocking: first_at at limit - margin + 1"),
        arithmetic,
    )

    def ok(c: tuple[int, int, int, tuple[int, ...]]) -> bool:
        window, reserve, margin, tokens = c
        limit = window - reserve
        if not tokens or tokens[0] > limit or any(b - a > margin for a, b in zip(tokens, tokens[1:])):
            return True
        blocks = m.first_over(True, window, reserve, margin, tokens, True)
        early = m.first_over(True, window, reserve, margin, tokens, False)
        return blocks is None or (early is not None and early < blocks)

    def prod_ok(c: tuple[int, int, int, tuple[int, ...]]) -> bool:
        window, reserve, margin, tokens = c
        if not tokens or tokens[0] > window - reserve or any(b - a > margin for a, b in zip(tokens, tokens[1:])):
            return True
        blocks, early = _production_first(*c)
        return blocks is None or (early is not None and early < blocks)

    growing = [(100, reserve, margin, tuple(range(start, 130, step))) for reserve in (0, 10) for margin in (1, 5, 10) for start in (0, 50) for step in range(1, margin + 1)]
    model = bounded(itertools.chain(_runs_of(), growing), ok, label=f"{THRESHOLD_RUNS}, and runs growing by 1..margin to past the limit")
    prod = bounded(itertools.chain(_runs_of(), growing), prod_ok, label=f"production Run: {THRESHOLD_RUNS}, and the growing runs")
    return also(proof, model).with_production(prod)


# -- the entries (infer_entry_*: the seed's infer_*_ffi_*) --------------------------------------------

_ODD_NUMBERS: tuple[object, ...] = (0, 1, 2**32 - 1, 2**32, 2**64 - 1, 2**64, 10**30, -1, True, False, 1.0, float("nan"), "1", None, [1])


def _entry_requests(op: str) -> Iterator[dict[str, object]]:
    """Every field of the entry given each odd value (others kept good), with every field missing in
    turn, an unknown field, an unknown op, no op."""
    fields = oracle.ENTRY_FIELDS[op]
    good: dict[str, object] = {name: (True if kind == "bool" else [0, 1, 0, 1] if kind == "u32s" else 3) for name, kind in fields}
    yield {"op": op, **good}
    for name, kind in fields:
        for value in _ODD_NUMBERS:
            yield {"op": op, **good, name: [value, 1] if kind == "u32s" and value is not None else value}
        yield {"op": op, **{k: v for k, v in good.items() if k != name}}
    yield {"op": op, **good, "zz": 1}
    yield {"op": op + "_", **good}
    yield {k: v for k, v in good.items()}
    if op == "force_flag":
        for attempt, supported, free in itertools.product((0, 1, 2**32 - 1), (False, True), (False, True)):
            yield {"op": op, "attempt": attempt, "supported": supported, "free": free}
    if op == "force_after":
        for attempt, retries, called in itertools.product((0, 1, 2**32 - 1), (0, 1, 2**32 - 1), (False, True)):
            yield {"op": op, "attempt": attempt, "retries": retries, "called": called}
    if op == "guard_start":
        yield from ({"op": op, "limit": k} for k in (0, 1, 64, 2**32 - 1))
    if op == "guard_feed":
        for k, stream in _long_streams()[:60]:
            yield {"op": op, "limit": k, "ids": list(stream)}
        yield {"op": op, "limit": 4, "ids": [2**32 - 1] * 5}
    if op == "threshold_over":
        for c in itertools.product((False, True), (0, 10, 2**64 - 1), (0, 3, 2**64 - 1), (0, 2, 2**64 - 1), (0, 6, 2**64 - 1)):
            yield dict(zip(("op", "enabled", "window", "reserve", "margin", "tokens"), (op, *c)))


def _model_answer(request: dict[str, object]) -> object:
    return m.entry(tuple(request.items()))


def _answer_says(request: dict[str, object]) -> object:
    """What the model answers a fitting request (the laws above tie these functions to the seed)."""
    op = request["op"]
    if op == "force_flag":
        return oracle.flag_says(request["attempt"], request["supported"], request["free"])  # type: ignore[arg-type]
    if op == "force_after":
        return oracle.after_says(request["attempt"], request["retries"], request["called"])  # type: ignore[arg-type]
    if op == "guard_start":
        return m.Guard(request["limit"], (), ())  # type: ignore[arg-type]
    if op == "guard_feed":
        return oracle.guard_says(request["limit"], tuple(request["ids"]))  # type: ignore[arg-type]
    return oracle.over_says(request["enabled"], request["window"], request["reserve"], request["margin"], request["tokens"])  # type: ignore[arg-type]


def _entry_law(op: str) -> Evidence:
    requests = list(_entry_requests(op))

    def model_ok(request: dict[str, object]) -> bool:
        error = oracle.entry_error_says(request)
        got = _model_answer(request)
        if error is not None:
            return isinstance(got, m.EntryError) and got.text() == error
        return not isinstance(got, m.EntryError) and got == _answer_says(request)

    def prod_ok(request: dict[str, object]) -> bool:
        error = oracle.entry_error_says(request)
        try:
            got = prod_entry.answer(request)
        except prod_entry.EntryError as failure:
            return str(failure) == error
        return error is None and got == _answer_says(request)

    label = f"{op}: every field x {len(_ODD_NUMBERS)} values (0, 1, 2^32 - 1, 2^32, 2^64 - 1, 2^64, 10^30, -1, booleans, a float, NaN, a string, null, a list), each field missing, an unknown field and op, and fitting requests"
    return bounded(requests, model_ok, label=label).with_production(bounded(requests, prod_ok, label=f"production entry.answer: {label}"))


@law("infer_entry_force", "S6.3", "The forced call's entries answer as the model on every request whose numbers fit (u32); anything else gets the exact EntryError.", BOUNDED)
def infer_entry_force() -> Evidence:
    return all_of(_entry_law("force_flag"), _entry_law("force_after"))


@law("infer_entry_guard", "S6.5", "The guard's entries answer as the model on every request whose numbers fit (u32 window and ids); anything else gets the exact EntryError.", BOUNDED)
def infer_entry_guard() -> Evidence:
    return all_of(_entry_law("guard_start"), _entry_law("guard_feed"))


@law("infer_entry_threshold", "S6.6", "The threshold's entry answers as the model on every request whose numbers fit (u64 tokens); anything else gets the exact EntryError.", BOUNDED)
def infer_entry_threshold() -> Evidence:
    return _entry_law("threshold_over")


# -- tool calls at stream end (S6.10) -------------------------------------------------------------------

STOPS = ("stop", "length", "toolUse", "error")
OFFERED = ("read", "edit")


def _markup(family: str, name: str, good: bool) -> str:
    """Leaked markup of one call in each family's form; ``good`` False: it does not parse."""
    args = '{"path": "a.py"}' if good else '{"path": "a.py"'
    if family == "hermes-json":
        return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'
    if family == "qwen3-coder-xml":
        return f"<tool_call>\n<function={name}>\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>" if good else f"<tool_call>\n<function={name}>\n<parameter=path>\na.py\n"
    if family == "omp-qwen":
        return f"✿FUNCTION✿: {name}\n✿ARGS✿: {args}\n✿RESULT✿"
    if family == "kimi":
        return f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
    return (
        f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n<｜DSML｜parameter name="path" string="true">a.py</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'
        if good
        else f'<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n<｜DSML｜parameter name="path"'
    )


# One leaked call's class: (parses, names an offered tool).
LEAK_CLASSES = ((True, True), (True, False), (False, True))
ReplyCase = tuple[int, str, tuple[tuple[bool, bool], ...], bool, int, str]


def _reply_cases() -> Iterator[ReplyCase]:
    for calls, stop, n, blank, notes in itertools.product(range(4), STOPS, range(4), (False, True), range(LEAK_NOTES_PLUS)):
        for leaks in itertools.product(LEAK_CLASSES, repeat=n):
            family = toolcalls.FAMILIES[(calls + n + notes) % len(toolcalls.FAMILIES)]
            yield calls, stop, leaks, blank, notes, family


LEAK_NOTES_PLUS = oracle.LEAK_NOTES + 2
REPLIES_LABEL = "0..3 native calls x 4 stop reasons x 0..3 leaked calls, each parsing and offered, not offered or not parsing x blank text or not x 0..3 leak notes spent (the families in turn)"


def _model_reply(c: ReplyCase) -> tuple[m.Reply, tuple[m.Call, ...]]:
    calls, stop, leaks, blank, _notes, _family = c
    native = tuple(m.Call(OFFERED[i % 2], "{}") for i in range(calls))
    leaked = tuple(m.Leak(m.Call("read" if offered else "nope", '{"path": "a.py"}') if parses else None) for parses, offered in leaks)
    text = "" if blank else "some text"
    return m.Reply(text + " <leak>" * len(leaks), native, stop, leaked, text), native


def _production_reply(c: ReplyCase) -> tuple[str, list[dict[str, object]], str]:
    calls, stop, leaks, blank, _notes, family = c
    native: list[dict[str, object]] = [{"name": OFFERED[i % 2], "arguments": "{}", "id": f"c{i}"} for i in range(calls)]
    parts = [] if blank else ["some text"]
    parts += [_markup(family, "read" if offered else "nope", parses) for parses, offered in leaks]
    if any(not parses for parses, _ in leaks):  # a cut markup runs to the end of the text: put it last
        parts.sort(key=lambda part: part in [_markup(family, "read" if o else "nope", False) for p, o in leaks if not p])
    return "\n".join(parts), native, stop


def _reply_law(prop: Any) -> Evidence:
    def model_ok(c: ReplyCase) -> bool:
        reply, native = _model_reply(c)
        out = m.classify(reply, OFFERED, c[4])
        return bool(prop(c, out.kind, out.stop, len(out.calls), out.leak_notes, out.text, out.rebuilt))

    def prod_ok(c: ReplyCase) -> bool:
        text, native, stop = _production_reply(c)
        out = toolcalls.read_reply(text, native, stop, OFFERED, c[4])
        return bool(prop(c, out.kind, out.stop, len(out.calls), out.leak_notes, out.text, out.rebuilt)) and len(out.results) == (len(out.calls) if out.kind == toolcalls.TRUNCATED else 0)

    model = bounded(_reply_cases(), model_ok, label=REPLIES_LABEL)
    prod = bounded(_reply_cases(), prod_ok, label=f"production read_reply with real markup of the five families: {REPLIES_LABEL}")
    hunt = examples(
        lambda text, stop, notes: toolcalls.read_reply(text, [], stop, OFFERED, notes).kind != toolcalls.ANSWER or not all(leak.call is not None and leak.call.name in OFFERED for leak in toolcalls.scan(text)) or not toolcalls.scan(text),
        text=st.lists(st.sampled_from([_markup(f, n, g) for f in toolcalls.FAMILIES for n in ("read", "nope") for g in (True, False)] + ["text", "```\n", "`", "\n", "<tool_call>", "✿FUNCTION✿:"]), max_size=6).map("".join),
        stop=st.sampled_from(STOPS),
        notes=st.integers(0, 5),
    )
    return also(model, hunt).with_production(prod).with_production(_wire_reply_law(prop))


# The same replies streamed by the loopback server in each built API's own form (spec.loopback) and
# decoded by that API's real client, then classified: the calls S6.10 reads are the ones the wire
# gave. The decoded text, thinking and calls are judged against the script; the stop against the
# API's spelling of it (spec.oracles.infer: decoded_stop_says; Mistral's stream has no finish reason,
# so a length script reads toolUse with calls, else stop, and the S6.10 properties are judged on the
# stop the wire can say). Stop reasons the wire carries (stop, length, toolUse); 0..2 native calls,
# 0..2 leaked calls; leak notes 0 and LEAK_NOTES (the decode does not read them); chat alternates
# indexed deltas with Ollama's whole calls and its reasoning field.
WIRE_REPLIES_LABEL = (
    f"each of the {len(WIRE_APIS)} wire APIs over loopback: 0..2 native calls x stop, length, toolUse"
    " x 0..2 leaked calls of each class x blank or not x 0 and LEAK_NOTES notes spent"
    " (usage absent, plain or with cache and reasoning counts; signed parts; every fifth reply after a transient failure, retried)"
)


def _wire_reply_cases() -> Iterator[ReplyCase]:
    return (c for c in _reply_cases() if c[0] <= 2 and c[1] != "error" and len(c[2]) <= 2 and c[4] in (0, oracle.LEAK_NOTES))


# The usage a reply ends with, in turn (the decode must not depend on it): none, plain counts, and
# counts with cache reads and writes and reasoning tokens; Gemini's thought signatures on text and
# calls, in turn (S6.10 reads neither).
WIRE_USAGE: tuple[lb.Tokens | None, ...] = (lb.Tokens(10, 5), None, lb.Tokens(7, 3, cache_read=4, cache_write=2, reasoning=1))


def _wire_script(api: str, text: str, native: list[dict[str, object]], stop: str, odd: bool, turn: int = 0) -> lb.Stream:
    signed = turn % 2 == 1
    parts: list[lb.Part] = [lb.Thinking("plan first")]
    parts += [lb.Text(piece, signature="ts" if signed else None) for piece in text.splitlines(keepends=True)]
    parts += [lb.Call(str(c["name"]), str(c["arguments"]), str(c["id"]), pieces=2, signature="cs" if signed else None) for c in native]
    chat_form = {"chat_call_index": not odd, "chat_reasoning_field": "reasoning" if odd else "reasoning_content"} if api == oracle.API_CHAT else {}
    return lb.Stream(parts, stop=stop, usage=WIRE_USAGE[turn % len(WIRE_USAGE)], **chat_form)  # type: ignore[arg-type]


@cache
def _wire_decoded() -> dict[tuple[str, str, str, str], tuple[str, str, tuple[tuple[str, str, str], ...], str]]:
    """Every distinct streamed reply of the wire cases, per API: (text, thinking, calls, stop) decoded."""
    keys: dict[tuple[str, str, str, str], lb.Stream | tuple[lb.Script, ...]] = {}
    for c in _wire_reply_cases():
        text, native, stop = _production_reply(c)
        for api in WIRE_APIS:
            key = (api, text, repr(native), stop)
            if key not in keys:
                n = len(keys)
                script = _wire_script(api, text, native, stop, n % 2 == 1, n // len(WIRE_APIS))
                # every fifth reply comes after a transient failure, retried: the calls read are the reply's
                keys[key] = (TRANSIENT[n // 5 % len(TRANSIENT)], script) if n % 5 == 4 else script
    batch = [(_wire_model(api), WireRequest((WireMessage("user", "go"),)), script) for (api, _t, _n, _s), script in keys.items()]
    out = {}
    kept: list[tuple[WireThought, ...]] = []
    for key, (_recorded, reply), thoughts in zip(keys, _wire_exchange(batch, thoughts=kept), kept, strict=True):
        if not isinstance(reply, WireReply):
            raise LawFailed(f"{key[0]}: the scripted reply did not decode: {reply}")
        # the reasoning a tool loop sends back is the reply's one thinking block with its signature, or none
        if thoughts not in ((), (WireThought("plan first", "sig"),)) and not (len(thoughts) == 1 and thoughts[0].text == "plan first" and thoughts[0].signature):
            raise LawFailed(f"{key[0]}: the reply's reasoning blocks are {thoughts!r}, not its one thinking block")
        out[key] = (reply.text, reply.thinking, tuple((call.name, call.arguments, call.id) for call in reply.tool_calls), reply.stop.reason)
    return out


def _wire_reply_law(prop: Any) -> Evidence:
    decoded = _wire_decoded()

    def ok(c: ReplyCase) -> bool:
        text, native, stop = _production_reply(c)
        for api in WIRE_APIS:
            got_text, thinking, calls, got_stop = decoded[api, text, repr(native), stop]
            want_calls = tuple((str(n["name"]), str(n["arguments"]), str(n["id"])) for n in native)
            want_stop = oracle.decoded_stop_says(api, stop, len(native))
            if (got_text, thinking, calls, got_stop) != (text, "plan first", want_calls, want_stop):
                raise LawFailed(f"{api} decoded {(got_text, thinking, calls, got_stop)!r}, the script says {(text, want_calls, want_stop)!r}")
            dicts: list[dict[str, object]] = [{"name": n, "arguments": a, "id": i} for n, a, i in calls]
            out = toolcalls.read_reply(got_text, dicts, got_stop, OFFERED, c[4])
            if not prop((c[0], want_stop, *c[2:]), out.kind, out.stop, len(out.calls), out.leak_notes, out.text, out.rebuilt):
                raise LawFailed(f"{api}: {c} decoded and classified as {out.kind}, stop {out.stop}")
        return True

    return bounded(_wire_reply_cases(), ok, label=f"production through the real wire clients: {WIRE_REPLIES_LABEL}")


# Streams that end without the API's end, or with an odd one: S6.10 reads the calls at stream end, so
# a stream with no end (cut, an error event, bytes that are no event of the API, a body that stops
# before its end event) gives no reply at all (a typed wire error: no call runs, nothing answers),
# while an end with a stop value the API does not list still ends the reply (its calls run, or are
# truncated where the API reads it as a length stop: Responses' incomplete reason). On
# Bedrock the bytes are event-stream frames, written here from the format's definition (prelude:
# total and header lengths, its CRC32; headers of each value type; the payload; the message CRC32):
# a valid frame of an event no reader knows, with one header of every value type, is skipped; a bad
# prelude CRC, a bad message CRC and a header of an unknown type are malformed. Elsewhere SSE lines
# that carry no event (comments, a name without data, an id, a retry field) before the reply change
# nothing.
def _aws_frame(headers: Sequence[tuple[str, int, bytes]], payload: bytes, *, prelude_crc: int = 0, message_crc: int = 0) -> bytes:
    import struct
    import zlib

    block = b"".join(struct.pack(">B", len(name)) + name.encode() + struct.pack(">B", kind) + value for name, kind, value in headers)
    prelude = struct.pack(">II", 12 + len(block) + len(payload) + 4, len(block))
    prelude += struct.pack(">I", (zlib.crc32(prelude) ^ prelude_crc) & 0xFFFFFFFF)
    message = prelude + block + payload
    return message + struct.pack(">I", (zlib.crc32(message) ^ message_crc) & 0xFFFFFFFF)


def _aws_typed_headers() -> list[tuple[str, int, bytes]]:
    import struct

    return [
        (":message-type", 7, struct.pack(">H", 5) + b"event"),
        (":event-type", 7, struct.pack(">H", 11) + b"lawUnheard1"),
        ("t", 0, b""), ("f", 1, b""), ("b", 2, struct.pack(">b", -1)), ("h", 3, struct.pack(">h", 300)),
        ("i", 4, struct.pack(">i", -70000)), ("l", 5, struct.pack(">q", 2**40)), ("y", 6, struct.pack(">H", 2) + b"\x00\xff"),
        ("d", 8, struct.pack(">q", 1_700_000_000_000)), ("u", 9, bytes(range(16))),
    ]


BROKEN_ENDS = ("cut", "error event", "no end event", "not an event", "odd stop", "odd framing")


def _aws_event(event: str, payload: bytes, message_type: str = "event", *more: tuple[str, str]) -> bytes:
    """An event-stream frame whose headers are strings: its message type, event type (or
    exception type) and ``more``."""
    named = ":exception-type" if message_type == "exception" else ":event-type"
    return lb.event_frame({":message-type": message_type, named: event, **dict(more)}, payload)


def _aws_prelude(total: int, headers: int) -> bytes:
    """A prelude (its CRC right) that states ``total`` and ``headers`` lengths, and ``total`` bytes."""
    import struct
    import zlib

    prelude = struct.pack(">II", total, headers)
    prelude += struct.pack(">I", zlib.crc32(prelude) & 0xFFFFFFFF)
    return prelude + bytes(max(total - 12, 0))


def _sse(kind: str, data: str) -> bytes:
    return f"event: {kind}\ndata: {data}\n\n".encode()


_RESPONSES_BAD = [
    _sse("response.output_text.delta", '{"type": "response.output_text.delta", "output_index": "first", "delta": "x"}'),
    _sse("response.output_text.delta", '{"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": 7}'),
    _sse("response.failed", '{"type": "response.failed", "response": {"error": {"code": "server_error", "message": "failed"}}}'),
    _sse("response.completed", '{"type": "response.completed"}'),
]
# Events each API's grammar does not allow, after the reply's parts (S6.10: no end, no reply): the
# wrong JSON type where the API's reference gives an object, a list, an index, a string; a delta
# for a block no start opened; an error the API states in its own stream form (Gemini's blocked
# prompt, Responses' response.failed, Bedrock's error and exception messages); base64 that is not.
MALFORMED: dict[str, list[bytes]] = {
    oracle.API_CHAT: [
        b'data: {"choices": 7}\n\n',
        b'data: {"choices": [7]}\n\n',
        b'data: {"choices": [{"delta": [7]}]}\n\n',
        b'data: {"choices": [{"delta": {"tool_calls": [7]}}]}\n\n',
        b'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": 7}]}}]}\n\n',
    ],
    "anthropic-messages": [
        _sse("content_block_delta", '{"type": "content_block_delta", "index": "1", "delta": {"type": "text_delta", "text": "x"}}'),
        _sse("content_block_start", '{"type": "content_block_start", "index": 9}'),
        _sse("content_block_delta", '{"type": "content_block_delta", "index": 1}'),
        _sse("content_block_delta", '{"type": "content_block_delta", "index": 9, "delta": {"type": "input_json_delta", "partial_json": "{"}}'),
        _sse("content_block_delta", '{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": 7}}'),
    ],
    "google-generative-ai": [
        b'data: {"promptFeedback": {"blockReason": "SAFETY"}}\n\n',
        b'data: {"candidates": 7}\n\n',
        b'data: {"candidates": [7]}\n\n',
        b'data: {"candidates": [{"content": {"parts": [7]}}]}\n\n',
    ],
    "openai-responses": _RESPONSES_BAD,
    oracle.API_AZURE: _RESPONSES_BAD,
    oracle.API_CODEX: _RESPONSES_BAD,
    oracle.API_VERTEX: [b'data: {"candidates": [{"content": {"parts": [7]}}]}\n\n'],
    oracle.API_MISTRAL: [
        _sse("function.call.delta", '{"type": "function.call.delta", "name": "read", "arguments": "{}"}'),
        _sse("function.call.delta", '{"type": "function.call.delta", "tool_call_id": "c9", "name": "read", "arguments": 7}'),
        _sse("message.output.delta", '{"type": "message.output.delta", "output_index": 1, "content": 7}'),
    ],
    oracle.API_BEDROCK: [
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": "1", "delta": {"text": "x"}}'),
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 1}'),
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 9, "delta": {"toolUse": {"input": "{"}}}'),
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "not base64!"}}}'),
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 1, "delta": {"text": 7}}'),
        _aws_event("contentBlockDelta", b"{not json"),
        _aws_event("contentBlockDelta", b"[1]"),
        _aws_event("validationException", b'{"message": "bad input"}', "exception"),
        _aws_event("", b"", "error", (":error-code", "InternalFailure"), (":error-message", "scripted")),
        _aws_frame([("s", 7, b"\x00\x32ab")], b"{}"),  # a string header longer than its block
        _aws_frame([("i", 4, b"\x00")], b"{}"),  # an int32 header cut short
        _aws_frame([("u", 9, bytes(4))], b"{}"),  # a UUID header cut short
        _aws_prelude(16, 100),  # headers longer than the message
    ],
}


# Events each API's grammar allows that carry nothing of the reply, after its parts (S6.10: the
# reply is read as if they were not there): Anthropic's redacted thinking block, a delta of a type
# the reader does not know (the API adds types, as citations_delta), message_deltas with no stop
# reason (stop_details whose explanation is null; a running usage count); Bedrock's redacted
# reasoning block, a block start that is no tool use, a citation delta, a metadata event; an
# OpenAI chat chunk with no choices (a compatible server's keep-alive: no OpenAI type). The vendor
# judges the Anthropic and Bedrock ones: each validates against its SDK's type (_quiet_refused).
QUIET: dict[str, list[bytes]] = {
    "anthropic-messages": [
        _sse("content_block_start", '{"type": "content_block_start", "index": 4, "content_block": {"type": "redacted_thinking", "data": "b3BhcXVl"}}'),
        _sse("content_block_stop", '{"type": "content_block_stop", "index": 4}'),
        _sse("content_block_start", '{"type": "content_block_start", "index": 5, "content_block": {"type": "text", "text": ""}}'),
        _sse("content_block_delta", '{"type": "content_block_delta", "index": 5, "delta": {"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "a", "document_index": 0, "document_title": null, "start_char_index": 0, "end_char_index": 1, "file_id": null}}}'),
        _sse("content_block_stop", '{"type": "content_block_stop", "index": 5}'),
        _sse("message_delta", '{"type": "message_delta", "delta": {"stop_details": {"type": "refusal", "category": null, "explanation": null}}, "usage": {"output_tokens": 1}}'),
        _sse("message_delta", '{"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null}, "usage": {"input_tokens": 3, "output_tokens": 2}}'),
    ],
    oracle.API_BEDROCK: [
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 4, "delta": {"reasoningContent": {"redactedContent": "b3BhcXVl"}}}'),
        _aws_event("contentBlockStop", b'{"contentBlockIndex": 4}'),
        _aws_event("contentBlockStart", b'{"contentBlockIndex": 5, "start": {"image": {"format": "png"}}}'),
        _aws_event("contentBlockDelta", b'{"contentBlockIndex": 5, "delta": {"citation": {"title": "a"}}}'),
        _aws_event("contentBlockStop", b'{"contentBlockIndex": 5}'),
        _aws_event("metadata", b'{"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}, "metrics": {"latencyMs": 5}}'),
    ],
    oracle.API_CHAT: [b'data: {"id": "chatcmpl-1", "object": "chat.completion.chunk"}\n\n'],
}


def _sdk_refusal(api: str, frame: bytes) -> str | None:
    """Why the vendor's own SDK refuses the event ``frame`` (None: it accepts it). Anthropic's SSE
    event through the SDK's stream event union (anthropic.types.RawMessageStreamEvent, a pydantic
    TypeAdapter); a Bedrock frame split by botocore's EventStreamBuffer, its JSON payload (blobs,
    base64 in JSON, as bytes) checked by botocore's ParamValidator against the event's shape in
    bedrock-runtime's ConverseStream model (no unknown key, no missing or mistyped member)."""
    if api == oracle.API_ANTHROPIC:
        from anthropic.types import RawMessageStreamEvent
        from pydantic import TypeAdapter, ValidationError

        data = [line[6:] for line in frame.decode().splitlines() if line.startswith("data: ")]
        try:
            TypeAdapter(RawMessageStreamEvent).validate_python(json.loads("".join(data)))
        except ValidationError as error:  # said by the union's member of the event's type, where it has one
            kinds = {get_args(t.model_fields["type"].annotation)[0]: t for t in get_args(get_args(RawMessageStreamEvent)[0])}
            event = json.loads("".join(data))
            try:
                kinds[event.get("type")].model_validate(event)
            except (KeyError, AttributeError, ValidationError) as own:
                error = own if isinstance(own, ValidationError) else error
            return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        return None
    import botocore.session  # type: ignore[import-untyped]  # the vendor SDK judges (no stubs)
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]
    from botocore.validate import ParamValidator  # type: ignore[import-untyped]

    stream = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream").output_shape
    shapes = stream.members["stream"].members
    buffer = EventStreamBuffer()
    buffer.add_data(frame)
    said = []
    for message in buffer:
        name = message.headers.get(":event-type")
        if message.headers.get(":message-type") != "event" or name not in shapes:
            said.append(f"no event of ConverseStream: {message.headers}")
            continue
        report = ParamValidator().validate(lb.boto_params(json.loads(message.payload), shapes[name]), shapes[name])
        if report.has_errors():
            said.append(f"{name}: {report.generate_report()}")
    return "; ".join(said) or None


def _quiet_refused() -> list[str]:
    """The QUIET events of Anthropic and Bedrock that the vendor's SDK refuses (a stand-in the
    API never sends would judge nothing); the check itself refuses stand-ins it must refuse."""
    wrong = {
        oracle.API_ANTHROPIC: _sse("content_block_delta", '{"type": "content_block_delta", "index": 5, "delta": {"type": "citations_delta", "citation": {"type": "char_location"}}}'),
        oracle.API_BEDROCK: _aws_event("metadata", b'{"metrics": {"latencyMs": 5}}'),
    }
    refused = [f"{api}: the SDK check takes {frame!r}, which its type refuses" for api, frame in wrong.items() if _sdk_refusal(api, frame) is None]
    for api, frame in wrong.items():
        for event in QUIET[api]:
            why = _sdk_refusal(api, event)
            if why is not None:
                refused.append(f"{api}: {event!r}: {why}")
    return refused


def _broken_scripts(api: str, parts: list[lb.Part]) -> list[tuple[str, lb.Stream]]:
    garbage = (
        [_aws_frame([(":message-type", 7, b"\x00\x05event")], b"{}", prelude_crc=1), _aws_frame([(":message-type", 7, b"\x00\x05event")], b"{}", message_crc=1), _aws_frame([("x", 10, b"")], b"{}")]
        if api == oracle.API_BEDROCK
        else [b"data: {not json\n\n", b'data: ["a list"]\n\n', b"event: message_start\ndata: 7\n\n"]
    ) + MALFORMED[api]
    out = [
        ("cut", lb.Stream([*parts, lb.Cut()])),
        ("error event", lb.Stream([*parts, lb.ErrorEvent()])),
        ("no end event", lb.Stream(parts, stop="toolUse", end=False)),
        *(("not an event", lb.Stream([*parts, lb.RawBytes(g)])) for g in garbage),
        ("odd stop", lb.Stream(parts, stop="toolUse", raw_stop="law_unheard_stop")),
    ]
    if api == oracle.API_BEDROCK:
        typed = _aws_frame(_aws_typed_headers(), b"{}")  # split over two reads: the first half waits for the rest
        out.append(("odd framing", lb.Stream([lb.RawBytes(typed[:20]), lb.Delay(0.02), lb.RawBytes(typed[20:]), *parts], stop="toolUse")))
    else:  # SSE lines that carry no event: a comment, an event name with no data, an id, a retry field; CR, LF and CR LF ends
        framing: list[lb.Part] = [lb.RawBytes(b": keep-alive\r\n\r\nevent: ping\r\rid: 7\n\nretry: 5\r\n\r\n")]
        # a field with no space after its colon, and an event of two data lines whose CR LF is split
        # over two reads (the CR last in the first piece: the LF after it is no second line end, so
        # the data is one JSON object of no field the API reads, not two lines that are no JSON)
        framing += [lb.RawBytes(b'retry:5\r\n\r\ndata: {"law":\r'), lb.Delay(0.02), lb.RawBytes(b"\ndata: 1}\r\n\r\n")]
        out.append(("odd framing", lb.Stream([*framing, *parts], stop="toolUse")))
    if api in QUIET:
        out.append(("odd framing", lb.Stream([*parts, lb.RawBytes(b"".join(QUIET[api]))], stop="toolUse")))
    if api == oracle.API_CHAT:
        # Ollama's calls: each whole, with no index, its arguments a JSON object; and a server that
        # closes after the finish_reason with no data: [DONE] (the reply is whole all the same)
        ollama = b"".join(
            b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.loads(c.arguments)}}]}}]}).encode() + b"\n\n"
            for c in parts if isinstance(c, lb.Call)
        )
        out.append(("odd framing", lb.Stream([*(p for p in parts if not isinstance(p, lb.Call)), lb.RawBytes(ollama)], stop="toolUse")))
        finish = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}\n\n'
        out.append(("odd framing", lb.Stream([*parts, lb.RawBytes(finish)], stop="toolUse", end=False)))
    if api == oracle.API_CODEX:  # the ChatGPT backend's end event, response.done, ends the reply as response.completed does
        done = _sse("response.done", '{"type": "response.done", "response": {"status": "completed"}}')
        out.append(("odd framing", lb.Stream([*parts, lb.RawBytes(done)], stop="toolUse", end=False)))
    if api == oracle.API_MISTRAL:  # content chunks that carry no text of the reply: an image, an empty text chunk
        chunks = [
            _sse("message.output.delta", '{"type": "message.output.delta", "output_index": 0, "content_index": 0, "content": {"type": "image_url", "image_url": "https://x/y.png"}}'),
            _sse("message.output.delta", '{"type": "message.output.delta", "output_index": 0, "content_index": 0, "content": {"type": "text", "text": ""}}'),
        ]
        out.append(("odd framing", lb.Stream([lb.RawBytes(b"".join(chunks)), *parts], stop="toolUse")))
    return out


def _wire_broken() -> Evidence:
    refused = _quiet_refused()
    if refused:
        raise LawFailed(f"events of QUIET the vendor's SDK refuses: {refused}")
    calls = [lb.Call("read", '{"path": "a"}', "c1"), lb.Call("edit", '{"path": "b"}', "c2")]
    parts: list[lb.Part] = [lb.Thinking("plan first"), lb.Text("on it"), *calls]
    cases = [(api, end, script) for api in WIRE_APIS for end, script in _broken_scripts(api, parts)]
    replies = _wire_exchange([(_wire_model(api), WireRequest((WireMessage("user", "go"),)), script) for api, _end, script in cases])

    def ok(i: int) -> bool:
        api, end, _script = cases[i]
        outcome = replies[i][1]
        if end not in ("odd stop", "odd framing"):
            return isinstance(outcome, WireError)
        if not isinstance(outcome, WireReply):
            raise LawFailed(f"{api}: a reply with {end} (a stop value the API does not list, or framing that carries no event) gave {outcome!r}")
        got = tuple((c.name, c.arguments, c.id) for c in outcome.tool_calls)
        dicts: list[dict[str, object]] = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in outcome.tool_calls]
        read = toolcalls.read_reply(outcome.text, dicts, outcome.stop.reason, OFFERED, 0)
        want = oracle.reply_says(2, outcome.stop.reason, (), False, 0)  # run_calls, or truncated where the API reads the odd end as length
        return got == (("read", '{"path": "a"}', "c1"), ("edit", '{"path": "b"}', "c2")) and outcome.text == "on it" and (read.kind, read.stop) == want[:2]

    return bounded(range(len(cases)), ok, label=f"each of the {len(WIRE_APIS)} wire APIs over loopback: a reply with text and 2 calls: {', '.join(BROKEN_ENDS)}")


# A refusal is one more stop reason (S6.10: calls are read at stream end, any stop reason): a reply
# with text, 0 or 1 call and the model's refusal, in each API's form (spec.loopback: OpenAI chat's
# delta.refusal, a Responses refusal content part, Anthropic's stop_details.explanation, Vertex's
# finishMessage; the Gemini API and Bedrock's content_filtered stop carry no text; Mistral's stream
# has no refusal form, so it ends as any reply: toolUse with calls, else stop). Its calls run; with
# none, its text answers.
REFUSAL_TEXT: dict[str, str | None] = {api: {oracle.API_GOOGLE: "", oracle.API_BEDROCK: "", oracle.API_MISTRAL: None}.get(api, "I can't help") for api in WIRE_APIS}


def _wire_refusals() -> Evidence:
    cases = [(api, calls) for api in WIRE_APIS for calls in (0, 1)]
    scripts = [lb.Stream([lb.Text("partial"), *[lb.Call("read", "{}", "c1")] * calls, lb.Refusal("I can't help")], stop="refusal") for _api, calls in cases]
    replies = _wire_exchange([(_wire_model(api), WireRequest((WireMessage("user", "go"),)), script) for (api, _calls), script in zip(cases, scripts, strict=True)])

    def ok(i: int) -> bool:
        api, calls = cases[i]
        outcome = replies[i][1]
        if not isinstance(outcome, WireReply):
            raise LawFailed(f"{api}: a refusal gave no reply: {outcome!r}")
        said = REFUSAL_TEXT[api]
        stop = "refusal" if said is not None else "toolUse" if calls else "stop"
        got = (outcome.text, tuple((c.name, c.arguments, c.id) for c in outcome.tool_calls), outcome.stop.reason, outcome.refusal)
        if got != ("partial", (("read", "{}", "c1"),) * calls, stop, said):
            raise LawFailed(f"{api}: a refusal with {calls} call(s) decoded as {got!r}")
        dicts: list[dict[str, object]] = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in outcome.tool_calls]
        read = toolcalls.read_reply(outcome.text, dicts, outcome.stop.reason, OFFERED, 0)
        return (read.kind, read.stop, read.leak_notes) == oracle.reply_says(calls, stop, (), False, 0)

    return bounded(range(len(cases)), ok, label=f"each of the {len(WIRE_APIS)} wire APIs over loopback: a refusal after text, with 0 and 1 call")


# Failures before any reply, through the real clients and the retry (control.md S4's retry.*, as
# TRANSIENT above: HTTP 408, 429, 5xx, 529 and a connection that fails or is cut before a reply are
# sent again, after the provider's hint when it gives one and its x-should-retry header when it says;
# a hint longer than a retry waits (60 s) is not waited for). S6.10 reads calls at stream end: a
# request that fails gives no reply (a typed wire error: no call runs); one retried gives the calls
# of the reply that came. Each case: its API, scripts in turn, retries, the client's options, and
# what the seed says: the outcome ("reply" or "error"), the attempts the server saw, the waits and
# the words each retry's line names. Hints the clients cannot read (a date with no zone, text, a
# negative count, a Duration that is no number, error details with no RetryInfo) leave the backoff:
# at most retry.baseDelayMs.
_ERR = '{"error": {"type": "invalid_request_error", "message": "no"}}'
_CALLED = lb.Stream([lb.Text("on it"), lb.Call("read", '{"path": "a"}', "c1")], stop="toolUse")
_GOOGLE_DELAY = '[{"error": {"code": 500, "status": "INTERNAL", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "%ss"}]}}]'
_GOOGLE_NO_DELAY = '[{"error": {"code": 500, "status": "INTERNAL", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "BUSY"}]}}]'
FailureCase = tuple[str, tuple[lb.Script, ...], int, dict[str, Any], str, int, tuple[str, ...]]
FAILURES: tuple[FailureCase, ...] = (
    (oracle.API_CHAT, (lb.Fail(400, _ERR),), 2, {}, "error", 1, ()),
    (oracle.API_CHAT, (lb.Fail(503, headers=(("x-should-retry", "false"),)),), 2, {}, "error", 1, ()),
    (oracle.API_CHAT, (lb.Fail(400, _ERR, (("x-should-retry", "true"),)), _CALLED), 2, {}, "reply", 2, ("HTTP 400 invalid_request_error",)),
    (oracle.API_CHAT, (lb.Fail(429, _ERR, (("retry-after", "100000"),)),), 2, {}, "error", 1, ()),
    (oracle.API_CHAT, (lb.Fail(503, headers=(("retry-after-ms", "soon"),)), _CALLED), 2, {}, "reply", 2, ("HTTP 503 server_error",)),
    (oracle.API_CHAT, (lb.Fail(503, headers=(("retry-after-ms", "-5"),)), _CALLED), 2, {}, "reply", 2, ("HTTP 503 server_error",)),
    (oracle.API_CHAT, (lb.Fail(502, "bad gateway"), _CALLED), 2, {}, "reply", 2, ("HTTP 502",)),
    (oracle.API_CHAT, (lb.Fail(503, headers=(("retry-after", "Wed, 21 Oct 2015 07:28:00"),)), lb.Fail(504, headers=(("retry-after", "tomorrow"),)), _CALLED), 2, {}, "reply", 3, ("HTTP 503", "HTTP 504")),
    (oracle.API_GOOGLE, (lb.Fail(500, _GOOGLE_DELAY % "x"), lb.Fail(500, _GOOGLE_DELAY.replace('"%ss"', "5")), _CALLED), 2, {}, "reply", 3, ("HTTP 500 INTERNAL", "HTTP 500 INTERNAL")),
    (oracle.API_GOOGLE, (lb.Fail(500, _GOOGLE_NO_DELAY), _CALLED), 2, {}, "reply", 2, ("HTTP 500 INTERNAL",)),
    (oracle.API_CHAT, (lb.Fail(503), lb.Fail(503), lb.Fail(503)), 2, {}, "error", 3, ("HTTP 503", "HTTP 503")),
    (oracle.API_CHAT, (lb.Fail(200, "{}"),), 2, {}, "error", 1, ()),
    (oracle.API_CHAT, (lb.Stream([lb.Cut()]), _CALLED), 1, {}, "reply", 2, ("stream cut",)),
    (oracle.API_CHAT, (lb.Stream([lb.Delay(0.5), lb.Text("late")]), _CALLED), 1, {"timeout": 0.1}, "reply", 2, ("timeout",)),
    (oracle.API_CHAT, (lb.Stream([lb.Text("a"), lb.Delay(0.3), lb.Text("b")]),), 0, {"deadline": 0.05}, "error", 1, ()),
    (oracle.API_CHAT, (), 1, {"base_url": "http://127.0.0.1:9/v1"}, "error", 0, ("no connection",)),
    (oracle.API_BEDROCK, (lb.Fail(400, '{"__type": "com.amazon.coral.validate#ValidationException", "message": "no"}'),), 2, {}, "error", 1, ()),
    (oracle.API_BEDROCK, (lb.Fail(429, "{}", (("x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/"),)), _CALLED), 2, {}, "reply", 2, ("HTTP 429 ThrottlingException",)),
    (oracle.API_ANTHROPIC, (lb.Fail(529, '{"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}', (("retry-after", "0"),)), _CALLED), -1, {}, "reply", 2, ("HTTP 529 overloaded_error",)),
    # settings of the endpoint that cannot name one: refused before any request (a typed BadRequest, never retried)
    (oracle.API_AZURE, (), 2, {"compat": {"azureAuth": "magic"}}, "refused", 0, ()),
    (oracle.API_AZURE, (), 2, {"compat": {"azureDeployment": ""}}, "refused", 0, ()),
    (oracle.API_AZURE, (), 2, {"compat": {"azureResource": "a b"}, "root": "/{resource}/openai/v1"}, "refused", 0, ()),
    (oracle.API_VERTEX, (), 2, {"compat": {"vertexProject": "a/b"}, "root": "/v1"}, "refused", 0, ()),
    (oracle.API_BEDROCK, (), 2, {"api_key": "", "unset": AWS_SIGN_IN}, "refused", 0, ()),
    # a request through the pool of a chat or an ask that has ended: nothing is sent, and the error
    # names the closed pool and the provider (eukhe.inference.wire.pool: PoolClosed, never retried)
    (oracle.API_CHAT, (), 2, {"pool": "closed"}, "closed", 0, ()),
)
FAILURES_LABEL = (
    "HTTP 400 (and with x-should-retry true), 503 with x-should-retry false, a 429 asking 100000 s, unreadable hints (retry-after-ms text or"
    " negative, a date with no zone, text, a Gemini retryDelay that is no number, Gemini details with no RetryInfo), a body that is no JSON,"
    " retries used up, a 200 that is no event stream, a cut before any event, a read timeout, the reply deadline, a refused connection, Bedrock's"
    " error type header and body; one with the session's retry settings and the real clock; Azure and Vertex settings that name no endpoint"
    " (an Azure resource name that is no DNS label); Bedrock with neither an API key nor AWS credentials; a request through a closed pool"
)


def _wire_failure_runs() -> list[tuple[WireOutcome | BadRequest | PoolClosed, int, list[float], list[str]]]:
    server = _wire_server()
    events, pool = _wire_session()
    fields = ("base_url", "compat", "api_key")

    async def run() -> list[tuple[WireOutcome | BadRequest | PoolClosed, int, list[float], list[str]]]:
        out: list[tuple[WireOutcome | BadRequest | PoolClosed, int, list[float], list[str]]] = []
        for api, scripts, retries, options, _want, _attempts, _lines in FAILURES:
            model = dataclasses.replace(_wire_model(api), **{k: v for k, v in options.items() if k in fields})
            if "root" in options:  # a bare root: the project and location come from the settings
                model = dataclasses.replace(model, base_url=server.url + options["root"])
            through = pool
            if options.get("pool") == "closed":  # a pool whose chat or ask ended, as ``async with`` leaves it
                async with Pool() as through:
                    made = through.client(model.provider)  # as the chat's first request made it
                if not made.is_closed:
                    raise LawFailed(f"{api}: the client of {model.provider} is still open after its pool closed")
            client = client_for(model, pool=through, **{k: v for k, v in options.items() if k not in (*fields, "root", "unset", "pool")})
            clock, lines = _NoSleep(), []
            if retries < 0:  # the session's settings (control.md S4 retry.*) and the event loop's clock
                settings = {"retry.enabled": True, "retry.maxRetries": 1, "retry.baseDelayMs": 1}
                retrying = Retrying(client, Policy.from_settings(settings.__getitem__), notify=lambda r: lines.append(r.line()))
            else:
                retrying = Retrying(client, Policy(max_retries=retries), clock=clock, random=lambda: 0.5, notify=lambda r: lines.append(r.line()))
            with server._lock:
                server.requests.clear()
            server.script(*scripts)
            outcome: WireOutcome | BadRequest | PoolClosed
            try:
                with _environment({}, options.get("unset", ())):
                    outcome = await collect(retrying.stream(WireRequest((WireMessage("user", "go"),))))
            except (WireError, BadRequest, PoolClosed) as error:
                outcome = error
            with server._lock:
                seen = len(server.requests)
                server.requests.clear()
            out.append((outcome, seen, clock.waits, lines))
        return out

    return events.run_until_complete(run())


def _wire_failures() -> Evidence:
    runs = _wire_failure_runs()

    def ok(i: int) -> bool:
        api, scripts, retries, _options, want, attempts, words = FAILURES[i]
        outcome, seen, waits, lines = runs[i]
        if want == "reply":
            if not isinstance(outcome, WireReply) or tuple((c.name, c.arguments) for c in outcome.tool_calls) != (("read", '{"path": "a"}'),):
                raise LawFailed(f"{api} {scripts}: retried, the reply's calls were not read: {outcome!r}")
        elif not isinstance(outcome, {"refused": BadRequest, "closed": PoolClosed}.get(want, WireError)):
            raise LawFailed(f"{api} {scripts}: {want} expected, got {outcome!r}")
        elif want == "closed" and not ("closed" in str(outcome) and "loop" in str(outcome)):
            raise LawFailed(f"{api}: a request through a closed pool raised {outcome!r}, which names neither the closed pool nor the provider")
        if seen != attempts or len(lines) != len(words) or (retries >= 0 and len(waits) != len(words)):
            raise LawFailed(f"{api} {scripts}: {seen} attempts and retries {lines}, the rules say {attempts} and {len(words)}")
        for k, (line, word) in enumerate(zip(lines, words, strict=True)):
            if not line.startswith(f"retry {k + 1}/{max(retries, 1)}: loop: {word}"):
                raise LawFailed(f"{api}: retry line {line!r} does not name {word!r}")
        for k, wait in enumerate(waits):  # no readable hint: the backoff, retry.baseDelayMs doubled per retry at most
            if not 0 < wait <= Policy().base_delay_ms / 1000 * 2**k:
                raise LawFailed(f"{api} {scripts}: retry {k + 1} waited {wait} s where no hint is readable (the backoff)")
        return True

    return bounded(range(len(FAILURES)), ok, label=f"failures before any reply over loopback and the retry: {FAILURES_LABEL}")


@law("run_calls_never_answer", "S6.10", "A reply whose calls run (native or rebuilt) never answers: a reply with calls is never the answer.", BOUNDED)
def run_calls_never_answer() -> Evidence:
    def prop(c: ReplyCase, kind: str, stop: str, calls: int, notes: int, text: str, rebuilt: bool) -> bool:
        has_calls = c[0] > 0 or (bool(c[2]) and all(p and o for p, o in c[2]))
        want = oracle.reply_says(c[0], c[1], tuple(p and o for p, o in c[2]), c[3], c[4])
        return (kind, stop, notes) == want and (not has_calls or (kind in ("run_calls", "truncated") and calls == (c[0] or len(c[2]))))

    return _reply_law(prop).with_production(_wire_broken()).with_production(_wire_failures()).with_production(_wire_refusals())


# More of each family's forms (S6.10: rebuilt only if every leaked call parses and names an offered
# tool, else retried with a leak note): the markup after a line of text, and the calls it holds when
# every one parses (read, with these arguments), None when one does not: arguments given as JSON
# text, or under "parameters"; arguments that are not an object or not JSON, a call with no name;
# text inside a function beside its parameters; text before a Kimi call, a Kimi call with no
# argument section; two Kimi calls; DeepSeek parameters given as JSON (string="false"), one that
# is not JSON, and text beside an invoke.
_KIMI = ("<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|tool_calls_section_end|>")
_DSML = "｜DSML｜"
LEAK_FORMS: tuple[tuple[str, tuple[dict[str, object], ...] | None], ...] = (
    ('<tool_call>\n{"name": "read", "arguments": "{\\"path\\": \\"a.py\\"}"}\n</tool_call>', ({"path": "a.py"},)),
    ('<tool_call>\n{"name": "read", "parameters": {"path": "a.py"}}\n</tool_call>', ({"path": "a.py"},)),
    ('<tool_call>\n{"name": "read", "arguments": "{\\"path\\": "}\n</tool_call>', None),
    ('<tool_call>\n{"name": "read", "arguments": [1]}\n</tool_call>', None),
    ('<tool_call>\n{"arguments": {"path": "a.py"}}\n</tool_call>', None),
    ("<tool_call>\n<function=read>\nstray\n<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>", None),
    ('✿FUNCTION✿: read\n✿ARGS✿: {"path": \n✿RESULT✿', None),
    (f'{_KIMI[0]}junk{_KIMI[1]}functions.read:0{_KIMI[2]}{{"path": "a.py"}}{_KIMI[3]}{_KIMI[4]}', None),
    (f"{_KIMI[0]}{_KIMI[1]}functions.read:0{_KIMI[3]}{_KIMI[4]}", None),
    (f'{_KIMI[0]}{_KIMI[1]}functions.read:0{_KIMI[2]}{{"path": "a.py"}}{_KIMI[3]}{_KIMI[1]}read{_KIMI[2]}{{"path": "b.py"}}{_KIMI[3]}{_KIMI[4]}', ({"path": "a.py"}, {"path": "b.py"})),
    (f'<{_DSML}function_calls>\n<{_DSML}invoke name="read">\n<{_DSML}parameter name="path" string="true">a.py</{_DSML}parameter>\n<{_DSML}parameter name="n" string="false">3</{_DSML}parameter>\n</{_DSML}invoke>\n</{_DSML}function_calls>', ({"path": "a.py", "n": 3},)),
    (f'<{_DSML}function_calls>\n<{_DSML}invoke name="read">\n<{_DSML}parameter name="n" string="false">[1,</{_DSML}parameter>\n</{_DSML}invoke>\n</{_DSML}function_calls>', None),
    (f'<{_DSML}function_calls>\nstray\n<{_DSML}invoke name="read">\n<{_DSML}parameter name="path" string="true">a.py</{_DSML}parameter>\n</{_DSML}invoke>\n</{_DSML}function_calls>', None),
)


def _leak_forms() -> Evidence:
    import json

    def ok(form: tuple[str, tuple[dict[str, object], ...] | None]) -> bool:
        markup, calls = form
        out = toolcalls.read_reply("let me look\n" + markup, [], "stop", OFFERED, 0)
        if calls is None:
            return (out.kind, out.leak_notes, out.rebuilt) == ("leak_retry", 1, False) and not out.calls
        got = tuple((c.name, json.loads(c.arguments)) for c in out.calls)
        return out.kind == "run_calls" and out.rebuilt and out.stop == "toolUse" and got == tuple(("read", a) for a in calls) and out.text.strip() == "let me look"

    return bounded(LEAK_FORMS, ok, label=f"{len(LEAK_FORMS)} more leaked forms of the five families, each rebuilt or noted as the seed says")


@law("rec_leak_rebuilt_is_calls", "S6.10", "Leaked markup whose every call parses and names an offered tool is rebuilt: the markup leaves the text, the stop is toolUse, the calls run as tool calls.", BOUNDED)
def rec_leak_rebuilt_is_calls() -> Evidence:
    def prop(c: ReplyCase, kind: str, stop: str, calls: int, notes: int, text: str, rebuilt: bool) -> bool:
        if c[0] > 0 or not c[2] or not all(p and o for p, o in c[2]):
            return not rebuilt
        native_kind = "truncated" if c[1] == "length" else "run_calls"
        clean = "" if c[3] else "some text"
        return rebuilt and kind == native_kind and calls == len(c[2]) and text == clean and stop == ("length" if c[1] == "length" else "toolUse")

    return _reply_law(prop).with_production(_leak_forms())


# -- tool-call argument repair ("S6 tool-call argument repair"; derived laws: the seed states the rules) --

from eukhe.inference import repair as prod_repair  # noqa: E402

SPELLINGS: tuple[object, ...] = (
    "", " ", "a", "true", "FALSE", " True ", "yes", "0", "-12", "+7", "3.5", "1e3", "1e999", "nan", "Infinity", "0x10", "١٢",
    1.0, '{"a": 1}', "{'a': 1}", "[1, 2]", '["x"]', "[1,", "null", '"q"', 7, -3, 2.5, 10**30, True, False, None, [1], {"a": 1}, ["s"],
)
KINDS = ("string", "integer", "number", "boolean", "array", "object", "string[]")


@law(
    "infer_argument_repaired_warned",
    "S6 argument repair",
    "Each alternate spelling becomes the declared type with one argument_repaired warning; anything else is left as is, unwarned; an unknown key of a closed schema stays an error.",
    BOUNDED,
    derivation="inference.md S6 tool-call argument repair, items 3 to 5",
)
def infer_argument_repaired_warned() -> Evidence:
    def schema_of(kind: str) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}} if kind == "string[]" else {"type": kind}

    def ok(case: tuple[str, object, bool]) -> bool:
        kind, value, quoted_key = case
        key = '"v"' if quoted_key else "v"
        schema = {"type": "object", "additionalProperties": False, "properties": {"v": schema_of(kind)}}
        got = prod_repair.repair_arguments({key: value, "extra": 1}, schema)
        base = "array" if kind == "string[]" else kind
        fits = {"string": isinstance(value, str), "integer": type(value) is int or (type(value) is float and float(value).is_integer()), "number": type(value) in (int, float), "boolean": type(value) is bool, "array": isinstance(value, list), "object": isinstance(value, dict)}[base]
        repaired, want = (False, value) if fits else oracle.spelling_says(base, value, "string" if kind == "string[]" else None)
        warnings = [w for w in got.warnings if w.startswith("argument_repaired")]
        return (
            got.arguments.get("v", "missing") == want
            and len(warnings) == int(repaired) + int(quoted_key)
            and len(warnings) == len(got.warnings)
            and [e.kind for e in got.errors] == ["unknown_key"]
        )

    cases = list(itertools.product(KINDS, SPELLINGS, (False, True)))
    spellings = bounded(cases, ok, label=f"{len(KINDS)} declared types x {len(SPELLINGS)} values (every JSON kind, numerals, boolean words, JSON texts, non-finite and non-ASCII numerals) x a JSON-string key or not, in a closed schema with an unknown key")

    def parse_form(text: str) -> bool:
        got = prod_repair.parse_tool_call_arguments(text)
        return set(got) == {"__parseError", "__rawJson"} and got["__rawJson"] == text[: oracle.RAW_JSON_KEPT]

    unreadable = ["{", "[1]", "1", '"a"', "{a: 1} x", "{a: NaN}", "{" + "x" * 1000, "{'a': 1e999}", "{a: b: c}", "null"]
    forms = bounded(unreadable, parse_form, label=f"{len(unreadable)} unreadable or non-object arguments: the parse-error form with the first {oracle.RAW_JSON_KEPT} characters")

    def named(case: tuple[str, tuple[str, ...]]) -> bool:
        called, offered = case
        got = prod_repair.suggestions(called, offered)
        return len(got) <= oracle.UNAVAILABLE_NAMED and len(set(got)) == len(got) and all(t in offered and t != called for t in got)

    offers = (("read_file", "write_file", "reed_file", "edit", "mcp__x__read_file"), ("a", "b", "c", "d", "e"), ())
    names = bounded(itertools.product(("read_file", "raed_file", "x__read_file", "a", "zz_e", "", "_"), offers), named, label="tool_unavailable names at most 3 distinct offered tools (7 names x 3 offers)")
    return all_of(spellings, forms, names, _repair_more())


# Items 2, 3, 5 and 6 at their edges, each case with what the seed says of it: the parse-error form
# given to the repair is an invalid_arguments error with the parse error and the raw text (nothing
# repaired); a JSON-string key stays when the plain key is present, and so does a quoted key that is
# no JSON string; an unknown key of an open schema is no error; tool_unavailable names the tool,
# the offered tools the suggestions give, and none when there are none.
def _repair_more() -> Evidence:
    closed = {"type": "object", "additionalProperties": False, "properties": {"v": {"type": "integer"}}}
    open_ = {"type": "object", "properties": {"v": {"type": "integer"}}}
    bad = prod_repair.parse_tool_call_arguments("{a: b: c}")
    cases: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str]]] = [
        (bad, closed, bad, ["invalid_arguments"]),
        ({'"v"': 1, "v": 2}, open_, {'"v"': 1, "v": 2}, []),
        ({'"\\x"': 1}, open_, {'"\\x"': 1}, []),
        ({"w": "1", "v": "3"}, open_, {"w": "1", "v": 3}, []),
    ]

    def ok(i: int) -> bool:
        given, schema, want, errors = cases[i]
        got = prod_repair.repair_arguments(given, schema)
        warned = 1 if i == 3 else 0  # "3" read as the declared integer
        said = all("{a: b: c}" in e.message and str(bad["__parseError"]) in e.message for e in got.errors)
        return got.arguments == want and [e.kind for e in got.errors] == errors and len(got.warnings) == warned and said

    def unavailable(case: tuple[str, tuple[str, ...], tuple[str, ...]]) -> bool:
        called, offered, named = case  # named: the offered tools close to the call (rule 6), labelled by hand
        message = prod_repair.tool_unavailable(called, offered)
        return message.startswith("tool_unavailable") and repr(called) in message and all(t in message for t in named) and (("Did you mean" in message) == bool(named))

    return all_of(
        bounded(range(len(cases)), ok, label="the parse-error form repaired, a JSON-string key beside its plain key, a quoted key that is no JSON string, an open schema's unknown key"),
        bounded((("raed_file", ("read_file", "edit"), ("read_file",)), ("zz", ("a",), ()), ("read", (), ())), unavailable, label="tool_unavailable's message: with and without suggestions"),
    )


@law(
    "infer_guard_chunks",
    "S6.5",
    "A block's deltas become chunks as the seed says: complete non-blank lines, long lines cut within the byte limit on a character boundary, wherever the deltas split, each block with its own partial line.",
    BOUNDED,
    derivation="S6.5 Chunk; the seed ties the delta -> chunk split to tests (not modelled): this law runs production against the oracle",
)
def infer_guard_chunks() -> Evidence:
    alphabet = ("a", "é", "😀", "\n", " ", "\r")

    def split_ok(case: tuple[int, tuple[str, ...]]) -> bool:
        limit, pieces = case
        text = "".join(pieces)
        want = oracle.chunks_says(text, limit)
        whole = prod_guard.split("", text, limit)
        rest, got = "", []
        for piece in pieces:  # every delta one character: the finest split
            rest, chunks = prod_guard.split(rest, piece, limit)
            got += chunks
        return (whole[1], whole[0]) == want and (got, rest) == want

    cases = [(limit, p) for limit in (4, 5, 7) for n in range(6) for p in itertools.product(alphabet, repeat=n)]
    splits = bounded(cases, split_ok, label="byte limits 4, 5, 7 x every text of 0..5 characters over {a, é, 😀, newline, space, CR}, whole and one character a delta")

    def blocks_ok(case: tuple[str, str]) -> bool:
        a, b = case
        guard = prod_guard.Guard(10**6)
        for x, y in itertools.zip_longest(a, b, fillvalue=""):
            guard.feed("a", x)
            guard.feed("b", y)
        return guard.chunks_read == len(oracle.chunks_says(a)[0]) + len(oracle.chunks_says(b)[0])

    texts = ("", "x\n", "ab\ncd\n", "\n\n", "é😀\n \n", "x" * 5000 + "\n", "no newline")
    blocks = bounded(itertools.product(texts, texts), blocks_ok, label="two blocks interleaved character by character: each keeps its own partial line (7 x 7 texts, one over 4096 bytes)")

    def settings_ok(k: int) -> bool:
        guard = prod_guard.Guard.from_settings({oracle.STREAM_REPEAT_LIMIT: k}.__getitem__)
        return guard.limit == k and prod_guard.Guard().limit == oracle.STREAM_REPEAT_DEFAULT and prod_guard.MAX_CHUNK_BYTES == oracle.MAX_CHUNK_BYTES

    limits = bounded((0, 1, 64, prod_guard.U32), settings_ok, label="the window read from retry.provider.streamRepeatLimit; default 64; 4096 bytes")

    def refused(bad: object) -> bool:
        try:
            prod_guard.Guard(bad)  # type: ignore[arg-type]
        except ValueError:
            return True
        return False

    bad = bounded((-1, prod_guard.U32 + 1, True, 1.5, "64", None), refused, label="a window that is not a natural up to 2^32 - 1 is refused")

    def message_ok(case: tuple[int, str]) -> bool:
        period, line = case
        error = prod_guard.StreamRepeating(period, line)
        return error.retryable and error.kind == "stream_repeating" and error.repeated_lines == {"period": period, "last_line": line} and str(period) in str(error) and line[:200] in str(error)

    messages = bounded(itertools.product((1, 7), ("x", "é" * 300)), message_ok, label="stream_repeating: retryable, its period and last line in the message and the failure info")
    return all_of(splits, blocks, limits, bad, messages).with_production(_wire_guarded())


# S6.5 "text and thinking deltas of every stream": each built API's client, given a guard's filter,
# streams a reply whose text (or thinking) loops on a 3-line cycle (the window 12, so periods up to
# 3 cut) before a call: the stream stops with stream_repeating at the chunk the seed's guard
# (spec.oracles.infer: guard_says) cuts, with its period and last line, and no reply (so no call).
GUARD_CYCLE = ("alpha\n", "beta\n", "gamma\n")


def _wire_guarded() -> Evidence:
    from eukhe.inference.wire.events import filter_of

    k, lines = 12, GUARD_CYCLE * 7
    want = oracle.guard_says(k, tuple(GUARD_CYCLE.index(line) for line in lines))
    assert want is not None
    cases = [(api, thinking) for api in WIRE_APIS for thinking in (False, True)]
    server = _wire_server()
    events, pool = _wire_session()

    async def run() -> list[tuple[object, int]]:
        out: list[tuple[object, int]] = []
        for api, thinking in cases:
            parts: list[lb.Part] = [lb.Thinking(line) if thinking else lb.Text(line) for line in lines]
            server.script(lb.Stream([*parts, lb.Call("read", "{}", "c1")], stop="toolUse"))
            guard = prod_guard.Guard(k)
            client = client_for(_wire_model(api), pool=pool)
            got: object
            try:
                got = await collect(client.stream(WireRequest((WireMessage("user", "go"),)), filter_of(guard.feed)))
            except prod_guard.StreamRepeating as cut:
                got = cut
            except WireError as error:
                got = error
            out.append((got, guard.chunks_read))
        await asyncio.sleep(0.01)  # the closes of the cut responses (shielded tasks) end here
        with server._lock:
            server.requests.clear()
        return out

    runs = events.run_until_complete(run())

    def ok(i: int) -> bool:
        got, read = runs[i]
        if not isinstance(got, prod_guard.StreamRepeating):
            raise LawFailed(f"{cases[i]}: a looping stream was not cut: {got!r}")
        return read == want[0] + 1 and got.repeated_lines == {"period": want[1], "last_line": lines[want[0]].rstrip("\n")}

    return bounded(range(len(cases)), ok, label=f"each of the {len(WIRE_APIS)} wire APIs over loopback, a 3-line cycle in text and in thinking, window {k}")


@law(
    "infer_threshold_token_count",
    "S6.6",
    "The provider's count_tokens is asked first when compaction.providerTokenCount is on; no counter, a failure or an answer that is not a token count: a warning and the local estimate; off: the estimate.",
    BOUNDED,
    derivation="S6.6 Check uses a local input-token estimate; compaction.providerTokenCount",
)
def infer_threshold_token_count() -> Evidence:
    def failing() -> int:
        raise OSError("count_tokens: 503")

    counters: tuple[tuple[str, Any, bool], ...] = (
        ("none", None, False),
        ("12", lambda: 12, True),
        ("0", lambda: 0, True),
        ("2^64 - 1", lambda: 2**64 - 1, True),
        ("2^64", lambda: 2**64, False),
        ("-1", lambda: -1, False),
        ("true", lambda: True, False),
        ("1.5", lambda: 1.5, False),
        ("failing", failing, False),
    )

    def ok(case: tuple[tuple[str, Any, bool], bool]) -> bool:
        (_name, counter, counts), use = case
        got = prod_threshold.input_tokens(7, counter, use)
        return got == ((counter(), "provider") if use and counts else (7, "local"))

    return bounded(itertools.product(counters, (False, True)), ok, label="9 provider counters (none, naturals at the edges of u64, past it, negative, a boolean, a float, failing) x the cvar on or off")


@law(
    "infer_relaxed_dialect",
    "S6 argument repair",
    "The final parse reads each repair the seed names, refuses truncation, trailing characters, non-finite numbers and hiding unquoted values, and always gives an object or the parse-error form.",
    BOUNDED,
    derivation="inference.md S6 tool-call argument repair, items 1 and 2",
)
def infer_relaxed_dialect() -> Evidence:
    read = bounded(oracle.REPAIRS_READ, lambda c: prod_repair.parse_tool_call_arguments(c[0]) == c[1], label="every repair the seed names")
    refused = bounded(oracle.REPAIRS_REFUSED, lambda t: set(prod_repair.parse_tool_call_arguments(t)) == {"__parseError", "__rawJson"}, label="every refusal the seed names")
    # the relaxed dialect's own strings (single quotes) with escapes, and missing separators and truncation there
    more_read = bounded(
        (("{'a': 'x\\ny'}", {"a": "x\ny"}), ("{'a': '\\u00e9\\t\\q'}", {"a": "é\t\\q"})),
        lambda c: prod_repair.parse_tool_call_arguments(c[0]) == c[1],
        label="escapes in single-quoted strings",
    )
    more_refused = bounded(
        ("{'a': 'abc\\", "{'a': 1 'b': 2}", "{'a': [1 2]}"),
        lambda t: set(prod_repair.parse_tool_call_arguments(t)) == {"__parseError", "__rawJson"},
        label="a single-quoted string cut after a backslash, a missing ',' in an object and in a list",
    )
    read, refused = all_of(read, more_read), all_of(refused, more_refused)
    tokens = ["{", "}", "[", "]", '"', "'", ":", ",", "\\", "/*", "//", "#", "True", "NaN", "0x", "1e999", "-", ".", "\n", "\x00", "a", "é"]

    def total(text: str) -> bool:
        got = prod_repair.parse_tool_call_arguments(text)
        return isinstance(got, dict) and ("__parseError" not in got or (set(got) == {"__parseError", "__rawJson"} and got["__rawJson"] == text[: oracle.RAW_JSON_KEPT]))

    hunt = examples(lambda text: total(text), text=st.one_of(st.text(), st.lists(st.sampled_from(tokens), max_size=30).map("".join)))
    return also(all_of(read, refused), hunt)
