"""The inference layer, part 1: the model of inference.md S6 items 1-4, 7 and 9.

Read it next to 004_cf1da0cad29d7f64.txt, S6. It holds:

- the quirks rulebook (S6.1, S6.2, S6.7, S6.13): compile (unknown directive, wrong value
  type, a dialect lacking its operation, unordered budgets, a capability host setting a wire
  directive, two rules of one layer and target giving one directive different values: a
  ``QuirksError``), the family by pattern, except-regex and revision range, the host by
  wire API, then provider id, then the longest URL fragment, and the lookup: explicit
  model.compat, then host, then model, then family, else Unknown;
- the forced tool call's steps (S6.3): ``flag`` and ``after``, and ``force`` driving them;
- the strict plan (S6.4): ``strict_plan``;
- the thinking ladder (S6.9): ``chosen_ladder`` and ``offered``;
- part 2 (issue 14): the repetition guard's stepper (S6.5: ``guard_start``, ``guard_feed``, and
  ``guard``, the seed's definition over windows), the compaction threshold (S6.6: ``over``,
  ``first_at``), the entries of those compiled models (``entry``: numbers past the wire's width
  are typed errors) and the classification of a reply at stream end (S6.10: ``classify``).
  Production (impl/eukhe/inference/guard.py, threshold.py) calls the guard's step and the
  threshold check of this module (the seed: "run as their compiled models ... no Rust copy")
  and keeps the byte work (lines to chunks, ids, whole tokens); it has its own classify.

The seed ties the strict plan, the thinking ladder and the forced call's steps to production
("run as their compiled models ... no Rust copy"), so impl/eukhe/inference/ calls those
functions of this module and holds no copy of them. Compile and lookup have a production
twin (impl/eukhe/inference/quirks.py), compared with this model by the quirks bridge.

Derived, not stated in the seed (harness.md and the Rust sources are not part of it):
- the directive table (names and value types beyond the ones S6.7 and S6.13 name) and the
  dialect table (which operations each endpoint dialect has);
- which of several compile errors is reported: the least by (layer, target, directive, kind),
  so the error itself, not only the outcome, is free of rule order;
- a size is a digit run (with dots) followed by ``b`` and then the end or a non-alphanumeric;
- a revision range is ``min`` inclusive and ``below`` exclusive (qwen-3.8 is >= 3.8, qwen < 3.8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- directives ---------------------------------------------------------------------------

BOOL, INT, STR, DIALECT, BUDGETS, LADDER = "bool", "int", "str", "dialect", "budgets", "ladder"
VALUE_TYPES: tuple[str, ...] = (BOOL, INT, STR, DIALECT, BUDGETS, LADDER)

CAPABILITIES: tuple[str, ...] = (
    "count_tokens",
    "list_models",
    "embed",
    "generate_image",
    "tokenize",
    "usage",
    "web_search",
    "compact",
)

# Directive::ALL: (name, value type), in the order the bridge takes "the first of each type".
DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("adaptive_thinking", BOOL),
    ("thinking_block_binding", BOOL),
    ("prompt_caching", BOOL),
    ("explicit_cache_breakpoints", BOOL),
    ("google_thinking_level", BOOL),
    ("prompt_progress", BOOL),
    ("supports_store", BOOL),
    ("supports_developer_role", BOOL),
    ("strict_cap", INT),
    ("max_tokens_field", STR),
    ("cache_control_marks", STR),
    ("thinking_budgets", BUDGETS),
    ("thinking_ladder", LADDER),
    ("count_tokens", DIALECT),
    ("list_models", DIALECT),
    ("embed", DIALECT),
    ("generate_image", DIALECT),
    ("tokenize", DIALECT),
    ("usage", DIALECT),
    ("web_search", DIALECT),
    ("compact", DIALECT),
)

# The endpoint dialects and the operations each has (S6.7; the table is derived).
DIALECTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("anthropic", ("count_tokens", "list_models", "usage", "web_search")),
    ("google", ("count_tokens", "list_models", "embed", "generate_image", "web_search")),
    ("llama-cpp", ("count_tokens", "list_models", "embed", "tokenize")),
    ("ollama", ("list_models", "embed")),
    ("openai", ("count_tokens", "list_models", "embed", "generate_image", "usage", "web_search", "compact")),
)

# S6.7: a scope-capabilities host sets only capability directives and prompt_progress.
CAPABILITY_SCOPED: tuple[str, ...] = (*CAPABILITIES, "prompt_progress")

LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

FAMILY, MODEL, HOST = "family", "model", "host"
LAYERS: tuple[str, ...] = (FAMILY, MODEL, HOST)  # lowest first; lookup reads them highest first
COMPAT = "compat"
WIRE, CAPS = "wire", "capabilities"


def value_type(directive: str) -> str | None:
    """The value type of a directive; None for a directive the table does not have."""
    for name, kind in DIRECTIVES:
        if name == directive:
            return kind
    return None


def dialect_has(dialect: str, operation: str) -> bool:
    for name, operations in DIALECTS:
        if name == dialect:
            return operation in operations
    return False


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- errors --------------------------------------------------------------------------------

UNKNOWN_DIRECTIVE, WRONG_TYPE, NO_OPERATION, UNORDERED, OUT_OF_SCOPE, CLASH = (
    "UnknownDirective",
    "WrongType",
    "NoOperation",
    "UnorderedBudgets",
    "OutOfScope",
    "Clash",
)
BAD_LAYER, BAD_PATTERN, DUPLICATE_FAMILY, DUPLICATE_HOST, BAD_SCOPE = (
    "UnknownLayer",
    "BadPattern",
    "DuplicateFamily",
    "DuplicateHost",
    "UnknownScope",
)
FAMILY_OVERLAP = "FamilyOverlap"
ERROR_KINDS: tuple[str, ...] = (
    BAD_PATTERN,
    DUPLICATE_FAMILY,
    DUPLICATE_HOST,
    BAD_SCOPE,
    BAD_LAYER,
    UNKNOWN_DIRECTIVE,
    WRONG_TYPE,
    NO_OPERATION,
    UNORDERED,
    OUT_OF_SCOPE,
    CLASH,
    FAMILY_OVERLAP,
)


@dataclass(frozen=True)
class QuirksError:
    """QuirksError::<kind>: where names the rule (layer/target/directive) or family, host, model."""

    kind: str
    where: str

    def text(self) -> str:
        return f"QuirksError::{self.kind}({self.where})"


def _error_key(error: QuirksError) -> tuple[str, int]:
    return (error.where, ERROR_KINDS.index(error.kind))


def _least(errors: list[QuirksError]) -> QuirksError | None:
    best: QuirksError | None = None
    for error in errors:
        if best is None or _error_key(error) < _error_key(best):
            best = error
    return best


# -- the rulebook as data -------------------------------------------------------------------

Value = object  # a directive's value as read (JSON): bool, int, str, list, dict, None
Canonical = object  # bool, int, str, False, a tuple of 4 ints, or a ladder (tuple of pairs)


@dataclass(frozen=True)
class Family:
    """A family: ``pattern`` matches at the start of the bare id (or the name), ``exclude``
    (the except-regex) anywhere; the revision, read after the pattern's match, must be at least
    ``min`` and below ``below`` when those are given."""

    id: str
    pattern: str
    min: tuple[int, ...] | None = None
    below: tuple[int, ...] | None = None
    exclude: str | None = None


@dataclass(frozen=True)
class Host:
    """A host: the wire API it names, the provider id it names, its URL fragments, its scope."""

    id: str
    api: str | None = None
    provider: str | None = None
    urls: tuple[str, ...] = ()
    scope: str = WIRE


@dataclass(frozen=True)
class Rule:
    layer: str
    target: str
    directives: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Book:
    families: tuple[Family, ...]
    hosts: tuple[Host, ...]
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class Compiled:
    """A compiled rulebook: every (layer, target, directive) with its one value."""

    families: tuple[Family, ...]
    hosts: tuple[Host, ...]
    settings: tuple[tuple[str, str, str, Canonical], ...]


def canonical(directive: str, value: Value) -> tuple[Canonical, str | None]:
    """The canonical value of a directive, or the kind of error its value is."""
    kind = value_type(directive)
    if kind is None:
        return None, UNKNOWN_DIRECTIVE
    if kind == BOOL:
        return (value, None) if isinstance(value, bool) else (None, WRONG_TYPE)
    if kind == INT:
        return (value, None) if is_int(value) and value >= 0 else (None, WRONG_TYPE)  # type: ignore[operator]
    if kind == STR:
        return (value, None) if isinstance(value, str) else (None, WRONG_TYPE)
    if kind == DIALECT:
        if value is False:
            return False, None
        if not isinstance(value, str):
            return None, WRONG_TYPE
        return (value, None) if dialect_has(value, directive) else (None, NO_OPERATION)
    if kind == BUDGETS:
        if not isinstance(value, list) or len(value) != 4 or not all(is_int(b) for b in value):
            return None, WRONG_TYPE
        budgets = (value[0], value[1], value[2], value[3])
        if not (budgets[0] <= budgets[1] <= budgets[2] <= budgets[3]):
            return None, UNORDERED
        return budgets, None
    # LADDER: a thinkingLevelMap, level -> wire string or null
    if not isinstance(value, dict):
        return None, WRONG_TYPE
    for level, entry in value.items():
        if level not in LEVELS or not (entry is None or isinstance(entry, str)):
            return None, WRONG_TYPE
    return tuple((level, value[level]) for level in LEVELS if level in value), None


def host_scope(hosts: tuple[Host, ...], host_id: str) -> str:
    for host in hosts:
        if host.id == host_id:
            return host.scope
    return WIRE


def _pattern_ok(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def compile_book(book: Book) -> Compiled | QuirksError:
    """S6.1 compile: the compiled rulebook, or the least of its errors."""
    errors: list[QuirksError] = []
    for i, family in enumerate(book.families):
        for earlier in book.families[:i]:
            if earlier.id == family.id:
                errors.append(QuirksError(DUPLICATE_FAMILY, f"family/{family.id}"))
        if not _pattern_ok(family.pattern) or (family.exclude is not None and not _pattern_ok(family.exclude)):
            errors.append(QuirksError(BAD_PATTERN, f"family/{family.id}"))
    for i, host in enumerate(book.hosts):
        for seen in book.hosts[:i]:
            if seen.id == host.id:
                errors.append(QuirksError(DUPLICATE_HOST, f"host/{host.id}"))
        if host.scope not in (WIRE, CAPS):
            errors.append(QuirksError(BAD_SCOPE, f"host/{host.id}"))
    settings: list[tuple[str, str, str, Canonical]] = []
    for rule in book.rules:
        if rule.layer not in LAYERS:
            errors.append(QuirksError(BAD_LAYER, f"{rule.layer}/{rule.target}"))
            continue
        for directive, raw in rule.directives:
            where = f"{rule.layer}/{rule.target}/{directive}"
            value, problem = canonical(directive, raw)
            if problem is not None:
                errors.append(QuirksError(problem, where))
                continue
            if rule.layer == HOST and host_scope(book.hosts, rule.target) == CAPS and directive not in CAPABILITY_SCOPED:
                errors.append(QuirksError(OUT_OF_SCOPE, where))
                continue
            already = False
            for layer, target, name, held in settings:
                if (layer, target, name) == (rule.layer, rule.target, directive):
                    already = True
                    if held != value:
                        errors.append(QuirksError(CLASH, where))
            if not already:
                settings.append((rule.layer, rule.target, directive, value))
    least = _least(errors)
    if least is not None:
        return least
    return Compiled(book.families, book.hosts, tuple(settings))


# -- revision and family (S6.2) -------------------------------------------------------------


def bare(model_id: str) -> str:
    """The bare name: lowercased, after the last '/'."""
    return model_id.lower().rsplit("/", 1)[-1]


def revision(rest: str) -> tuple[int, ...]:
    """The revision read from what follows the family's prefix: the first digit run (with dots);
    a size (digits then 'b': 8b, 1.5b) is not one; none: 0."""
    start = 0
    while start < len(rest) and not digit(rest[start]):
        start += 1
    if start == len(rest):
        return (0,)
    end = start
    while end < len(rest) and (digit(rest[end]) or rest[end] == "."):
        end += 1
    token = rest[start:end].strip(".")
    after = rest[end:]
    if after[:1] == "b" and (len(after) == 1 or not (digit(after[1]) or "a" <= after[1] <= "z")):
        return (0,)
    parts = tuple(number(p) for p in token.split(".") if p)
    return parts if parts else (0,)


def number(digits: str) -> int:
    """A digit run's value; a run too long for int() (over 4,000 digits) reads as the largest
    revision part we keep, 10**4000 (no family range reaches it)."""
    kept = digits.lstrip("0")
    if len(kept) > 4000:
        return 10**4000
    return int(kept) if kept else 0


def digit(ch: str) -> bool:
    """An ASCII digit (other Unicode digits are not revisions)."""
    return "0" <= ch <= "9"


def compare(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """-1, 0 or 1, missing parts read as 0 (3 == 3.0 < 3.8)."""
    size = max(len(a), len(b))
    for i in range(size):
        x = a[i] if i < len(a) else 0
        y = b[i] if i < len(b) else 0
        if x != y:
            return -1 if x < y else 1
    return 0


def family_matches(family: Family, text: str) -> bool:
    found = re.match(family.pattern, text)
    if found is None:
        return False
    if family.exclude is not None and re.search(family.exclude, text) is not None:
        return False
    rev = revision(text[found.end() :])
    if family.min is not None and compare(rev, family.min) < 0:
        return False
    if family.below is not None and compare(rev, family.below) >= 0:
        return False
    return True


@dataclass(frozen=True)
class FamilyAnswer:
    """The family of a model: ``family`` (None: no family), or the families that overlap."""

    family: str | None
    overlap: tuple[str, ...] = ()


def family_of(families: tuple[Family, ...], model_id: str, name: str | None) -> FamilyAnswer:
    texts = (bare(model_id),) if name is None else (bare(model_id), name.lower())
    found: list[str] = []
    for family in families:
        if any(family_matches(family, text) for text in texts) and family.id not in found:
            found.append(family.id)
    if len(found) == 1:
        return FamilyAnswer(found[0])
    return FamilyAnswer(None, tuple(sorted(found)))


# -- host (S6.2) ----------------------------------------------------------------------------


def scope_of(directive: str) -> str:
    return CAPS if directive in CAPABILITY_SCOPED else WIRE


def host_of(hosts: tuple[Host, ...], api: str, provider: str, base_url: str, scope: str) -> str | None:
    """The one host: the one naming the wire API, else the provider id, else the longest URL
    fragment in the base URL; ties go to the smaller host id. A wire lookup skips
    scope-capabilities hosts. Signals never combine."""
    seen = tuple(h for h in hosts if scope == CAPS or h.scope == WIRE)
    best: str | None = None
    for host in seen:
        if api and host.api == api and (best is None or host.id < best):
            best = host.id
    if best is not None:
        return best
    for host in seen:
        if provider and host.provider == provider and (best is None or host.id < best):
            best = host.id
    if best is not None:
        return best
    url = base_url.lower()
    length = 0
    for host in seen:
        for fragment in host.urls:
            if fragment and fragment.lower() in url:
                longer = len(fragment) > length
                if longer or (len(fragment) == length and best is not None and host.id < best):
                    best, length = host.id, len(fragment)
    return best


# -- lookup (S6.1) --------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    model_id: str
    name: str | None = None
    provider: str = ""
    api: str = ""
    base_url: str = ""
    compat: tuple[tuple[str, Canonical], ...] = ()


@dataclass(frozen=True)
class Answer:
    """A directive's answer and the layer it came from; ``known`` False is Unknown."""

    known: bool
    value: Canonical = None
    layer: str = ""


UNKNOWN = Answer(False)


def setting(compiled: Compiled, layer: str, target: str | None, directive: str) -> Answer:
    if target is None:
        return UNKNOWN
    for at, where, name, value in compiled.settings:
        if (at, where, name) == (layer, target, directive):
            return Answer(True, value, layer)
    return UNKNOWN


def lookup(compiled: Compiled, query: Query, directive: str) -> Answer:
    """Explicit model.compat first; then host > model > family; no rule: Unknown."""
    for name, value in query.compat:
        if name == directive:
            return Answer(True, value, COMPAT)
    host = host_of(compiled.hosts, query.api, query.provider, query.base_url, scope_of(directive))
    family = family_of(compiled.families, query.model_id, query.name).family
    for layer, target in ((HOST, host), (MODEL, query.model_id), (FAMILY, family)):
        answer = setting(compiled, layer, target, directive)
        if answer.known:
            return answer
    return UNKNOWN


def check_catalog(families: tuple[Family, ...], models: tuple[tuple[str, str | None], ...]) -> QuirksError | None:
    """S6.2: two families matching a compiled-catalog model is an error (the first model so)."""
    for model_id, name in models:
        answer = family_of(families, model_id, name)
        if answer.overlap:
            return QuirksError(FAMILY_OVERLAP, f"{model_id}: {', '.join(answer.overlap)}")
    return None


# -- the forced tool call (S6.3): the compiled steps -----------------------------------------

RETRY, CALLED, NOT_CALLED = "retry", "called", "not_called"


def flag(attempt: int, supported: bool, free: bool) -> bool:
    """Whether attempt ``attempt`` sets native forced choice: the first only if supported and
    free (no prompt-cache invalidation); a retry if supported.

    pre: attempt >= 0
    """
    if attempt == 0:
        return supported and free
    return supported


def after(attempt: int, retries: int, called: bool) -> str:
    """The step after attempt ``attempt``'s reply: a call ends it; a miss retries while
    ``attempt + 1 <= retries``, else fails (ForcedToolError::NotCalled).

    pre: attempt >= 0 and retries >= 0
    """
    if called:
        return CALLED
    if attempt + 1 <= retries:
        return RETRY
    return NOT_CALLED


@dataclass(frozen=True)
class Forced:
    """A forced call's run: the flag of each attempt made, and how it ended."""

    flags: tuple[bool, ...]
    outcome: str


def called_at(replies: tuple[bool, ...], attempt: int) -> bool:
    """Whether attempt ``attempt``'s reply called the tool: a reply list shorter than the
    attempts made reads as misses."""
    return replies[attempt] if attempt < len(replies) else False


def force(retries: int, supported: bool, free: bool, replies: tuple[bool, ...]) -> Forced:
    """The steps driven over the model's replies (True: the reply called the tool): attempt 0,
    then one more while the step says retry (it says so only while attempt + 1 <= retries, so
    the loop's first test only states when it ends)."""
    attempt = 0
    flags: tuple[bool, ...] = ()
    flags = flags + (flag(attempt, supported, free),)
    step = after(attempt, retries, called_at(replies, attempt))
    while attempt < retries and step == RETRY:
        attempt += 1
        flags = flags + (flag(attempt, supported, free),)
        step = after(attempt, retries, called_at(replies, attempt))
    return Forced(flags, step)


# -- the strict plan (S6.4) ------------------------------------------------------------------

STRICT, LOOSE = "strict", "loose"


@dataclass(frozen=True)
class Tool:
    name: str
    priority: int = 0
    strict_required: bool = False


@dataclass(frozen=True)
class StrictPlan:
    """Each tool, in the order given, strict or loose; or the error naming the strict-required
    tool past the cap (the highest-priority one, the earlier of equals)."""

    modes: tuple[str, ...]
    error: str | None = None


def beats(tools: tuple[Tool, ...], i: int, j: int) -> bool:
    """Tool i comes before tool j in the strict order: higher priority, or equal and earlier."""
    return tools[i].priority > tools[j].priority or (tools[i].priority == tools[j].priority and i < j)


def ahead_of(tools: tuple[Tool, ...], i: int) -> int:
    """How many tools come before tool i in the strict order."""
    ahead = 0
    for j in range(len(tools)):
        if j != i and beats(tools, j, i):
            ahead += 1
    return ahead


def modes_of(tools: tuple[Tool, ...], cap: int) -> tuple[str, ...]:
    """Each tool strict when fewer than ``cap`` tools come before it, else loose."""
    modes: tuple[str, ...] = ()
    for i in range(len(tools)):
        modes = modes + (STRICT if ahead_of(tools, i) < cap else LOOSE,)
    return modes


def first_loose_required(tools: tuple[Tool, ...], modes: tuple[str, ...]) -> int | None:
    """The strict-required tool left loose that comes first in the strict order, if any."""
    first: int | None = None
    for i in range(len(tools)):
        if tools[i].strict_required and modes[i] == LOOSE and (first is None or beats(tools, i, first)):
            first = i
    return first


def strict_plan(tools: tuple[Tool, ...], cap: int) -> StrictPlan:
    """At most ``cap`` strict schemas, highest priority first (ties: the earlier tool); the
    rest loose; none dropped."""
    modes = modes_of(tools, cap)
    first = first_loose_required(tools, modes)
    if first is None:
        return StrictPlan(modes, None)
    return StrictPlan(modes, tools[first].name)


# -- the thinking ladder (S6.9) --------------------------------------------------------------

LevelMap = tuple[tuple[str, "str | None"], ...]


@dataclass(frozen=True)
class ThinkingDefaults:
    """thinking_defaults: the default ladder of a reasoning model, the plain default."""

    reasoning: tuple[str, ...]
    plain: tuple[str, ...]


def chosen_ladder(explicit: LevelMap | None, rule: LevelMap | None) -> LevelMap:
    """The explicit map, else the rulebook ladder, else no entries."""
    if explicit is not None:
        return explicit
    if rule is not None:
        return rule
    return ()


def entry_of(ladder: LevelMap, level: str) -> tuple[bool, str | None]:
    for name, value in ladder:
        if name == level:
            return True, value
    return False, None


def offered(reasoning: bool, ladder: LevelMap, defaults: ThinkingDefaults) -> tuple[str, ...]:
    """The levels offered, in ladder order: no reasoning: the plain default; reasoning, per
    level: a wire string keeps, null removes, no entry: kept iff the default ladder lists it."""
    kept: tuple[str, ...] = ()
    for level in LEVELS:
        if not reasoning:
            if level in defaults.plain:
                kept = kept + (level,)
            continue
        present, value = entry_of(ladder, level)
        if present:
            if value is not None:
                kept = kept + (level,)
        elif level in defaults.reasoning:
            kept = kept + (level,)
    return kept


# -- the repetition guard (S6.5): the compiled stepper -----------------------------------------

KEPT = 0  # the step's verdict when the chunk is kept; a cut is its period p >= 1


def periods(limit: int) -> int:
    """The longest period the guard cuts: max(1, k / 4) (integer division).

    pre: limit >= 0
    """
    return max(1, limit // 4)


@dataclass(frozen=True)
class Guard:
    """The guard's state: the window k, the ids of the newest chunks read, newest first (``ids[p -
    1]`` is the chunk p before the next one), and, per period p (1..max(1, k / 4)),
    ``counts[p - 1]``: the count of consecutive chunks up to the newest that each equal the chunk
    p before it. The seed's core keeps every id read; the step reads only the newest max(1, k / 4)
    of them, so this model keeps those (the same answers). A count is stored for each period up to
    one past the ids held (none before the first chunk): a count not stored is 0."""

    limit: int
    ids: tuple[int, ...] = ()
    counts: tuple[int, ...] = ()


def guard_start(limit: int) -> Guard:
    """The guard of a new attempt: nothing read.

    pre: limit >= 0
    """
    return Guard(limit, (), ())


def guard_feed(state: Guard, chunk: int) -> tuple[Guard, int]:
    """Read one chunk (its id). Per period p = 1..max(1, k / 4): its count grows by one when the
    chunk equals the chunk p before it, else it is 0. The verdict is the shortest period p whose
    count reaches k - p (the newest k - p chunks each equal the chunk p before: the window of the
    last k chunks is periodic with period p, the cycle seen k / p >= 4 times), else KEPT. A window
    k of 0 is the guard off (derived: the seed gives no meaning to a window of no chunks; a cvar
    of 0 reads as no limit).

    pre: chunk >= 0
    """
    if state.limit == 0:
        return state, KEPT
    top = periods(state.limit)
    last = min(top, len(state.ids) + 1)  # a period past the held ids counts 0: it cuts only when k = p = 1
    ids: tuple[int, ...] = (chunk,)  # the newest chunks, newest first: this one, then the held ones
    counts: tuple[int, ...] = ()
    verdict = KEPT
    for p in range(1, last + 1):
        count = 0
        if p <= len(state.ids) and state.ids[p - 1] == chunk:  # the chunk p before equals this one
            before = state.counts[p - 1] if p <= len(state.counts) else 0
            count = before + 1
        counts = counts + (count,)
        if verdict == KEPT and count >= state.limit - p:
            verdict = p
        if p < top and p <= len(state.ids):
            ids = ids + (state.ids[p - 1],)  # keep the newest max(1, k / 4) chunks
    return Guard(state.limit, ids, counts), verdict


def periodic(window: tuple[int, ...], p: int) -> bool:
    """Each chunk after the first p equals the one p earlier."""
    i = p
    while i < len(window):
        if window[i] != window[i - p]:
            return False
        i += 1
    return True


def guard(limit: int, stream: tuple[int, ...]) -> tuple[int, int] | None:
    """The guard as the seed defines it: the first chunk (its index) after which the window of
    the last k chunks is periodic with a period 1..max(1, k / 4), and the shortest such period;
    None: never cut. A window 0 is the guard off."""
    if limit == 0:
        return None
    n = 1
    while n <= len(stream):
        if n >= limit:
            window = stream[n - limit : n]
            p = 1
            while p <= periods(limit):
                if periodic(window, p):
                    return n - 1, p
                p += 1
        n += 1
    return None


def guard_run(limit: int, stream: tuple[int, ...]) -> tuple[int, int] | None:
    """The step driven over a stream: the index and period of the first cut, else None."""
    state = guard_start(limit)
    i = 0
    while i < len(stream):
        state, verdict = guard_feed(state, stream[i])
        if verdict != KEPT:
            return i, verdict
        i += 1
    return None


# -- the compaction threshold (S6.6): the compiled check -----------------------------------------

NO_COMPACTION, BACKGROUND, BLOCKING = "none", "background", "blocking"


def over(enabled: bool, window: int, reserve: int, margin: int, tokens: int) -> str:
    """The threshold check of one request: off or window 0: none; tokens + reserve > window
    (over the limit window - reserve): blocking; else margin > 0 and tokens + reserve + margin
    > window (over the threshold limit - margin): background; else none.

    pre: window >= 0 and reserve >= 0 and margin >= 0 and tokens >= 0
    """
    if not enabled or window == 0:
        return NO_COMPACTION
    if tokens + reserve > window:
        return BLOCKING
    if margin > 0 and tokens + reserve + margin > window:
        return BACKGROUND
    return NO_COMPACTION


def first_at(run: tuple[int, ...], at: int) -> int | None:
    """The index of the first request of a run whose tokens reach ``at``; None: none does."""
    i = 0
    while i < len(run):
        if run[i] >= at:
            return i
        i += 1
    return None


def first_over(enabled: bool, window: int, reserve: int, margin: int, run: tuple[int, ...], blocking: bool) -> int | None:
    """The first request of a run the check sends to compaction (blocking only, or either)."""
    i = 0
    while i < len(run):
        verdict = over(enabled, window, reserve, margin, run[i])
        if verdict == BLOCKING or (verdict == BACKGROUND and not blocking):
            return i
        i += 1
    return None


# -- the numbers' entries (the *_ffi_* laws): what the compiled models accept ----------------------

U32 = 2**32 - 1
U64 = 2**64 - 1

# (op, ((field, kind), ...)): kind "u32", "u64" (a natural that fits) or "bool".
ENTRIES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("force_flag", (("attempt", "u32"), ("supported", "bool"), ("free", "bool"))),
    ("force_after", (("attempt", "u32"), ("retries", "u32"), ("called", "bool"))),
    ("guard_start", (("limit", "u32"),)),
    ("guard_feed", (("limit", "u32"), ("ids", "u32s"))),
    ("threshold_over", (("enabled", "bool"), ("window", "u64"), ("reserve", "u64"), ("margin", "u64"), ("tokens", "u64"))),
)


@dataclass(frozen=True)
class EntryError:
    """EntryError::<kind>(op.field): Op (no such entry), Missing, Unknown (a field the entry
    does not have), Type (not a natural, not a boolean), Range (a natural past the wire's width)."""

    kind: str
    where: str

    def text(self) -> str:
        return f"EntryError::{self.kind}({self.where})"


def _field_error(op: str, name: str, kind: str, value: object) -> EntryError | None:
    where = f"{op}.{name}"
    if kind == "bool":
        return None if isinstance(value, bool) else EntryError("Type", where)
    if kind == "u32s":
        if not isinstance(value, (list, tuple)):
            return EntryError("Type", where)
        for item in value:
            problem = _field_error(op, name, "u32", item)
            if problem is not None:
                return problem
        return None
    if not is_int(value) or value < 0:  # type: ignore[operator]
        return EntryError("Type", where)
    width = U32 if kind == "u32" else U64
    return None if value <= width else EntryError("Range", where)  # type: ignore[operator]


def entry(request: tuple[tuple[str, object], ...]) -> object:
    """Answer one request of the compiled models' entries: ("op", name) and the entry's fields.
    A request whose numbers fit is answered as the model answers; anything else gets the
    first error in the entry's field order (unknown op, then each field: missing, wrong type,
    past the width; then an unknown field)."""
    fields = dict(request)
    op = fields.get("op")
    spec: tuple[tuple[str, str], ...] | None = None
    for name, declared in ENTRIES:
        if name == op:
            spec = declared
    if spec is None or not isinstance(op, str):
        return EntryError("Op", str(op) if isinstance(op, str) else "?")
    for name, kind in spec:
        if name not in fields:
            return EntryError("Missing", f"{op}.{name}")
        problem = _field_error(op, name, kind, fields[name])
        if problem is not None:
            return problem
    for name in sorted(fields):
        if name != "op" and all(name != declared for declared, _ in spec):
            return EntryError("Unknown", f"{op}.{name}")
    if op == "force_flag":
        return flag(fields["attempt"], fields["supported"], fields["free"])  # type: ignore[arg-type]
    if op == "force_after":
        return after(fields["attempt"], fields["retries"], fields["called"])  # type: ignore[arg-type]
    if op == "guard_start":
        return guard_start(fields["limit"])  # type: ignore[arg-type]
    if op == "guard_feed":
        return guard_run(fields["limit"], tuple(fields["ids"]))  # type: ignore[arg-type]
    return over(fields["enabled"], fields["window"], fields["reserve"], fields["margin"], fields["tokens"])  # type: ignore[arg-type]


# -- tool calls at stream end (S6.10): the classification ------------------------------------------

LEAK_NOTES = 2
RUN_CALLS, TRUNCATED, LEAK_RETRY, ANSWER, LENGTH_NOTE, NO_ANSWER = (
    "run_calls",
    "truncated",
    "leak_retry",
    "answer",
    "length_note",
    "no_answer",
)
STOP_LENGTH, STOP_TOOL_USE = "length", "toolUse"


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # the arguments as the model wrote them (JSON text)


@dataclass(frozen=True)
class Leak:
    """One leaked call found in a call-less reply's text: its call when it parses, else None."""

    call: Call | None


@dataclass(frozen=True)
class Reply:
    """A reply at stream end: its text with leaked markup (``text``), the same text with the
    markup removed (``clean``), its tool calls, its stop reason, the leaks a scan found."""

    text: str
    calls: tuple[Call, ...]
    stop: str
    leaks: tuple[Leak, ...] = ()
    clean: str = ""


@dataclass(frozen=True)
class Outcome:
    """What the harness does with a reply: the kind, the calls it runs (or marks truncated),
    the stop reason it records, the text it keeps, the leak notes spent in a row after it."""

    kind: str
    calls: tuple[Call, ...]
    stop: str
    text: str
    leak_notes: int
    rebuilt: bool = False


def classify(reply: Reply, offered: tuple[str, ...], leak_notes: int) -> Outcome:
    """S6.10: tool calls are read at stream end whatever the stop reason. A length stop runs
    none (each gets truncated); otherwise calls run. A call-less reply with leaked markup is
    rebuilt when every leaked call parses and names an offered tool (the markup leaves the
    text, the stop reason becomes toolUse, the calls run as tool calls; under a length stop
    they are truncated like any call: derived from "length reply runs none"), else retried with a leak note while fewer than
    LEAK_NOTES were spent in a row, then answers as text. No text and no call: a length stop
    gets the length note, any other the no-answer note.

    pre: leak_notes >= 0
    """
    if reply.calls:
        if reply.stop == STOP_LENGTH:
            return Outcome(TRUNCATED, reply.calls, reply.stop, reply.text, 0)
        return Outcome(RUN_CALLS, reply.calls, reply.stop, reply.text, 0)
    if reply.leaks:
        rebuilt: list[Call] = []
        for leak in reply.leaks:
            if leak.call is not None and leak.call.name in offered:
                rebuilt.append(leak.call)
        if len(rebuilt) == len(reply.leaks):
            if reply.stop == STOP_LENGTH:
                return Outcome(TRUNCATED, tuple(rebuilt), reply.stop, reply.clean, 0, True)
            return Outcome(RUN_CALLS, tuple(rebuilt), STOP_TOOL_USE, reply.clean, 0, True)
        if leak_notes < LEAK_NOTES:
            return Outcome(LEAK_RETRY, (), reply.stop, reply.text, leak_notes + 1)
        return Outcome(ANSWER, (), reply.stop, reply.text, 0)
    if reply.text.strip():
        return Outcome(ANSWER, (), reply.stop, reply.text, 0)
    if reply.stop == STOP_LENGTH:
        return Outcome(LENGTH_NOTE, (), reply.stop, reply.text, 0)
    return Outcome(NO_ANSWER, (), reply.stop, reply.text, 0)


# -- the bridge's transcript ------------------------------------------------------------------


def show(value: Canonical) -> str:
    """A canonical value as the transcript prints it."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return repr_str(value)
    if isinstance(value, tuple) and len(value) == 4 and all(is_int(v) for v in value):
        return "[" + ",".join(str(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "{" + ",".join(f"{level}:{'null' if v is None else repr_str(v)}" for level, v in value) + "}"
    return "?"


def repr_str(text: str) -> str:
    """A string quoted with its non-ASCII and control characters as \\u escapes."""
    out = '"'
    for ch in text:
        if ch in '"\\' or ord(ch) < 32 or ord(ch) > 126:
            out += "\\u" + format(ord(ch), "04x") if ord(ch) <= 0xFFFF else "\\U" + format(ord(ch), "08x")
        else:
            out += ch
    return out + '"'


def book_of(event: dict[str, object]) -> Book:
    """A scenario's rulebook event: families, hosts, rules as JSON."""
    families: list[Family] = []
    for raw in event.get("families", []):  # type: ignore[attr-defined]
        families.append(
            Family(
                raw["id"],
                raw["pattern"],
                None if raw.get("min") is None else tuple(raw["min"]),
                None if raw.get("below") is None else tuple(raw["below"]),
                raw.get("except"),
            )
        )
    hosts: list[Host] = []
    for raw in event.get("hosts", []):  # type: ignore[attr-defined]
        hosts.append(Host(raw["id"], raw.get("api"), raw.get("provider"), tuple(raw.get("urls", [])), raw.get("scope", WIRE)))
    rules: list[Rule] = []
    for raw in event.get("rules", []):  # type: ignore[attr-defined]
        rules.append(Rule(raw["layer"], raw["target"], tuple((k, v) for k, v in raw["set"])))
    return Book(tuple(families), tuple(hosts), tuple(rules))


def query_of(event: dict[str, object]) -> Query:
    compat: list[tuple[str, Canonical]] = []
    for name, raw in event.get("compat", []):  # type: ignore[attr-defined]
        value, problem = canonical(name, raw)
        if problem is None:
            compat.append((name, value))
    name = event.get("name")
    return Query(
        str(event["model"]),
        None if name is None else str(name),
        str(event.get("provider", "")),
        str(event.get("api", "")),
        str(event.get("base_url", "")),
        tuple(compat),
    )


def swapped(book: Book, i: int, j: int) -> Book:
    rules = list(book.rules)
    if i < len(rules) and j < len(rules):
        rules[i], rules[j] = rules[j], rules[i]
    return Book(book.families, book.hosts, tuple(rules))


def compile_line(number: int, result: Compiled | QuirksError) -> str:
    if isinstance(result, QuirksError):
        return f"{number} compile {result.text()}"
    return f"{number} compile ok settings={len(result.settings)}"


def query_line(number: int, compiled: Compiled | QuirksError, query: Query, directives: list[str]) -> str:
    if isinstance(compiled, QuirksError):
        return f"{number} query no rulebook"
    fam = family_of(compiled.families, query.model_id, query.name)
    fam_text = fam.family if fam.family is not None else ("overlap(" + ",".join(fam.overlap) + ")" if fam.overlap else "-")
    wire_host = host_of(compiled.hosts, query.api, query.provider, query.base_url, WIRE)
    caps_host = host_of(compiled.hosts, query.api, query.provider, query.base_url, CAPS)
    parts = [f"{number} family={fam_text} host={wire_host or '-'} caps_host={caps_host or '-'}"]
    for directive in directives:
        answer = lookup(compiled, query, directive)
        parts.append(f"{directive}={show(answer.value)}@{answer.layer}" if answer.known else f"{directive}=unknown")
    return " ".join(parts)


def transcript(events: list[dict[str, object]]) -> list[str]:
    """The model side of the quirks bridge: compile and lookup, one line after each event."""
    book = Book((), (), ())
    compiled: Compiled | QuirksError = compile_book(book)
    lines: list[str] = []
    for number, event in enumerate(events):
        kind = event["do"]
        if kind == "rulebook":
            book = book_of(event)
            compiled = compile_book(book)
            lines.append(compile_line(number, compiled))
        elif kind == "swap":
            book = swapped(book, int(event["i"]), int(event["j"]))  # type: ignore[call-overload]
            compiled = compile_book(book)
            lines.append(compile_line(number, compiled))
        elif kind == "query":
            lines.append(query_line(number, compiled, query_of(event), list(event["directives"])))  # type: ignore[call-overload]
        else:
            raise ValueError(f"event {number}: unknown event {kind!r}")
    return lines


if __name__ == "__main__":
    import sys

    from bend import scenario

    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
