"""The inference layer's judges: inference.md S6 transcribed as data (004_cf1da0cad29d7f64.txt).

Nothing here imports the model or production: the laws compare both with these tables. The
threshold's rule is the seed's own line, read by ``spec.oracles.seed_rules``.
"""

from __future__ import annotations

from typing import Any

from spec.oracles import seed_rules

# S6.1: the layers, highest first; explicit model.compat beats them all.
LAYERS_HIGHEST_FIRST: tuple[str, ...] = ("compat", "host", "model", "family")

# Directive::ALL as this project names it (S6.7 capabilities, S6.13 model facts, S6.9 ladder,
# S6.4 strict cap), with value types: the judge of "unknown directive" and "wrong value type".
DIRECTIVES: dict[str, str] = {
    "adaptive_thinking": "bool",
    "thinking_block_binding": "bool",
    "prompt_caching": "bool",
    "explicit_cache_breakpoints": "bool",
    "google_thinking_level": "bool",
    "prompt_progress": "bool",
    "supports_store": "bool",
    "supports_developer_role": "bool",
    "strict_cap": "int",
    "max_tokens_field": "str",
    "cache_control_marks": "str",
    "thinking_budgets": "budgets",
    "thinking_ladder": "ladder",
    "count_tokens": "dialect",
    "list_models": "dialect",
    "embed": "dialect",
    "generate_image": "dialect",
    "tokenize": "dialect",
    "usage": "dialect",
    "web_search": "dialect",
    "compact": "dialect",
}

# S6.7: the eight capabilities.
CAPABILITIES: tuple[str, ...] = ("count_tokens", "list_models", "embed", "generate_image", "tokenize", "usage", "web_search", "compact")
# S6.7: scope-capabilities hosts, which set only capability directives and prompt_progress.
SCOPE_CAPABILITY_HOSTS: tuple[str, ...] = ("openai", "google", "llama-cpp")

# S10 ladder order.
LADDER: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

# S6.9 thinking_defaults (shipped): reasoning = off to high; plain = off; S6.13 budgets.
DEFAULT_REASONING: tuple[str, ...] = ("off", "minimal", "low", "medium", "high")
DEFAULT_PLAIN: tuple[str, ...] = ("off",)
DEFAULT_BUDGETS: tuple[int, int, int, int] = (1024, 2048, 8192, 16384)

# S6.2 and S6.9, S6.13: every family the seed names.
FAMILIES: tuple[str, ...] = (
    "qwen-3.8",
    "qwen",
    "grok-4.3",
    "grok-4.5",
    "grok-4.6",
    "claude-adaptive",
    "claude-adaptive-4-6",
    "claude-cached",
    "claude-uncached",
    "gpt-explicit-cache",
    "gpt-priority",
    "gpt-priority-explicit-cache",
    "gemini-3-plus",
    "gemini-latest",
    "gemma-4",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
)

# S6.2 examples: model id -> family.
FAMILY_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("qwen3.8-27b", "qwen-3.8"),
    ("qwen3-8b", "qwen"),
    ("qwq-32b", "qwen"),
    ("grok-4.6", "grok-4.6"),
    ("grok-4.7", "grok-4.6"),
)

# S6.9: the levels each shipped family ladder offers a reasoning model (with the shipped
# defaults), and the wire strings the seed names.
FAMILY_OFFERS: dict[str, tuple[str, ...]] = {
    "qwen-3.8": ("off", "low", "medium", "xhigh"),  # S10 ladder 1: custom qwen3.8-27b
    "qwen": ("off", "high"),
    "grok-4.3": ("off", "low", "medium", "high"),  # off as none; no minimal
    "grok-4.5": ("minimal", "low", "medium", "high"),  # no off, minimal
    "grok-4.6": ("minimal", "low", "medium", "high", "xhigh"),  # no off, minimal, + xhigh
}
FAMILY_WIRE: dict[str, dict[str, str]] = {
    "qwen-3.8": {"off": "none"},
    "grok-4.3": {"off": "none"},
}

# S6.13: which families answer which directive, and with what.
FAMILY_FACTS: dict[str, dict[str, object]] = {
    "adaptive_thinking": {"claude-adaptive": True, "claude-adaptive-4-6": True},
    "thinking_block_binding": {"claude-adaptive": True},
    "prompt_caching": {"claude-adaptive": True, "claude-adaptive-4-6": True, "claude-cached": True, "claude-uncached": False},
    "explicit_cache_breakpoints": {"gpt-explicit-cache": True, "gpt-priority-explicit-cache": True},
    "google_thinking_level": {
        "gemini-3-plus": True,
        "gemini-latest": True,
        "gemma-4": True,
        "gemini-2.5-pro": False,
        "gemini-2.5-flash": False,
        "gemini-2.5-flash-lite": False,
    },
    "thinking_budgets": {
        "gemini-2.5-pro": (128, 2048, 8192, 32768),
        "gemini-2.5-flash": (128, 2048, 8192, 24576),
        "gemini-2.5-flash-lite": (512, 2048, 8192, 24576),
    },
}

# S6.8 service tiers: (provider, api, family or None) -> tiers the model honours beyond default.
SERVICE_TIERS: tuple[tuple[str, str, str | None, tuple[str, ...]], ...] = (
    ("openrouter", "openai-completions", None, ("flex", "priority")),
    ("openai", "openai-responses", None, ("auto", "scale")),
    ("openai-codex", "openai-codex-responses", None, ("auto", "scale")),
    ("openai", "openai-responses", "gpt-priority", ("auto", "scale", "flex", "priority")),
    ("openai", "openai-responses", "gpt-priority-explicit-cache", ("auto", "scale", "flex", "priority")),
    ("openai-codex", "openai-codex-responses", "gpt-priority", ("auto", "scale", "priority")),
    ("openai-codex", "openai-codex-responses", "gpt-priority-explicit-cache", ("auto", "scale", "priority")),
)

# S6.12 service_tier_prices: (provider, api, tier, model id) -> multiplier.
TIER_PRICES: tuple[tuple[str, str, str, str, float], ...] = (
    ("openai", "openai-responses", "flex", "gpt-5.2", 0.5),
    ("openai", "openai-responses", "priority", "gpt-5.2", 2.0),
    ("openai", "openai-responses", "fast", "gpt-5.2", 2.0),
    ("openai", "openai-responses", "priority", "gpt-5.5", 2.5),
    ("openai", "openai-responses", "flex", "gpt-5.5", 0.5),
    ("openai", "openai-completions", "flex", "gpt-5.2", 0.5),
    ("openai", "openai-completions", "priority", "gpt-5.5", 2.5),
    ("openai-codex", "openai-codex-responses", "flex", "gpt-5.2-codex", 0.5),
    ("openai-codex", "openai-codex-responses", "priority", "gpt-5.2-codex", 2.0),
    ("openai-codex", "openai-codex-responses", "priority", "gpt-5.5", 2.5),
    ("openai", "openai-responses", "scale", "gpt-5.5", 1.0),
    ("openrouter", "openai-completions", "priority", "anthropic/claude-opus-4-6", 1.0),
)

# S6.12 cache_write_1h_prices: claude 2 (first match on the lowercased id).
CACHE_WRITE_1H: tuple[tuple[str, float | None], ...] = (
    ("claude-opus-4-6", 2.0),
    ("anthropic/claude-opus-4-6", 2.0),
    ("us.anthropic.claude-opus-4-6-v1:0", 2.0),
    ("Claude-Haiku-5.5", 2.0),
    ("gpt-5.5", None),
)

# S6.2 hosts: (provider, base URL) -> the host wire settings come from.
HOST_EXAMPLES: tuple[tuple[str, str, str, str | None], ...] = (
    # provider, api, base URL, host
    ("openrouter", "openai-completions", "http://127.0.0.1:8080/v1", "openrouter"),
    ("my-router", "openai-completions", "https://openrouter.ai/api/v1", "openrouter-url"),
    ("openai", "openai-responses", "http://localhost:8000/v1", "loopback"),
    ("my-llama", "openai-completions", "http://127.0.0.1:8080", "loopback"),
    ("anthropic", "anthropic-messages", "https://api.anthropic.com", "anthropic"),
)

# S6.3: the forced call's steps, as the seed's law table states them.


def flag_says(attempt: int, supported: bool, free: bool) -> bool:
    """infer_force_flag_exact: attempt 0 flags iff supported and free, a retry iff supported."""
    return (supported and free) if attempt == 0 else supported


def after_says(attempt: int, retries: int, called: bool) -> str:
    """infer_force_after_exact: a call ends it; a miss on attempt i retries iff i + 1 <= retries, else fails."""
    if called:
        return "called"
    return "retry" if attempt + 1 <= retries else "not_called"


# S6.4: the seed's manual extended thinking rule: these APIs reject forced choice with it.
MANUAL_THINKING_REJECTS: tuple[str, ...] = ("anthropic-messages", "bedrock-converse-stream")


def tier_multiplier_says(provider: str, api: str, tier: str | None, model_id: str) -> float:
    """S6.12 service_tier_prices as the seed states them: openai on openai-responses and
    openai-completions: flex 0.5; priority, fast 2, gpt-5.5 2.5. openai-codex: flex 0.5;
    priority 2, gpt-5.5 2.5. No row: the base price."""
    if provider == "openai" and api in ("openai-responses", "openai-completions"):
        priced = {"flex": 0.5, "priority": 2.0, "fast": 2.0}
    elif provider == "openai-codex" and api == "openai-codex-responses":
        priced = {"flex": 0.5, "priority": 2.0}
    else:
        return 1.0
    if tier not in priced:
        return 1.0
    if model_id == "gpt-5.5" and tier != "flex":
        return 2.5
    return priced[tier]


def cache_write_1h_says(model_id: str) -> float | None:
    """S6.12 cache_write_1h_prices: claude 2 (a regex on the lowercased id); none: the model's rate."""
    return 2.0 if "claude" in model_id.lower() else None


# -- part 2 (issue 14) -------------------------------------------------------------------------------

# S6.5: "lines over 4096 bytes (MAX_CHUNK_BYTES) split there"; "retry.provider.streamRepeatLimit,
# default 64"; "Period 1 to k / 4 (at least 1)".
MAX_CHUNK_BYTES = 4096
STREAM_REPEAT_LIMIT = "retry.provider.streamRepeatLimit"
STREAM_REPEAT_DEFAULT = 64


def longest_period_says(k: int) -> int:
    return max(1, k // 4)


def window_periodic_says(window: tuple[int, ...], p: int) -> bool:
    """S6.5: "periodic with period p if each chunk after the first p equals the one p earlier"."""
    return window[p:] == window[: len(window) - p]


def guard_says(k: int, stream: tuple[int, ...]) -> tuple[int, int] | None:
    """S6.5 and infer_guard_feed_exact: the first chunk after which the window of the last k
    chunks is periodic with a period 1..max(1, k / 4), with the shortest such period; None: not
    cut. A window of 0 chunks never cuts (derived: a limit of 0 is no limit)."""
    if k == 0:
        return None
    for n in range(k, len(stream) + 1):
        window = stream[n - k : n]
        for p in range(1, longest_period_says(k) + 1):
            if window_periodic_says(window, p):
                return n - 1, p
    return None


# S6.6 infer_threshold_over_exact: the seed's own line, read and evaluated (spec.oracles.seed_rules).
# "off" is the seed's word for compaction not enabled. The line's clauses end with background;
# when none holds the check starts no compaction: "none", the word its first clause gives for
# no compaction (S6.6: compaction only over the threshold or over the limit).
OVER_WORDS = {"off": "not enabled"}
OVER_OTHERWISE = "none"
OVER_RESULTS = ("none", "background", "blocking")


def over_rule() -> seed_rules.Rule:
    found = seed_rules.rule("infer_threshold_over_exact", OVER_WORDS)
    seed_rules.results_cover(found, OVER_RESULTS)
    return found


def over_env(enabled: Any, window: Any, reserve: Any, margin: Any, tokens: Any) -> dict[str, Any]:
    """The names of the seed's rule bound to a request's values (Python or z3)."""
    return {"enabled": enabled, "window": window, "reserve": reserve, "margin": margin, "tokens": tokens}


def over_says(enabled: bool, window: int, reserve: int, margin: int, tokens: int) -> str:
    return over_rule().result(over_env(enabled, window, reserve, margin, tokens), otherwise=OVER_OTHERWISE)


def first_at_says(run: tuple[int, ...], at: int) -> int | None:
    """infer_threshold_*_steps: the first request of the run whose tokens reach ``at``."""
    return next((i for i, tokens in enumerate(run) if tokens >= at), None)


# S6.6: BackgroundMargin: "eukhe session 10% of window"; "harness library default 32,768 tokens";
# "keepRecentTokens (eukhe default 40,000) ... <= half the threshold".
SESSION_MARGIN_PERCENT = 10.0
LIBRARY_MARGIN_TOKENS = 32_768
KEEP_RECENT_DEFAULT = 40_000


# S6.10: what the harness does with a reply at stream end.
LEAK_NOTES = 2


def reply_says(calls: int, stop: str, leaks: tuple[bool, ...], text_blank: bool, notes: int) -> tuple[str, str, int]:
    """S6.10 as the seed states it: (what happens, the stop reason recorded, leak notes in a row
    after it). ``leaks``: one flag per leaked call of a call-less reply, True when it parses and
    names an offered tool. Calls run whatever the stop reason, except a length reply, which runs
    none (each is truncated); leaked calls, all good, are rebuilt (stop toolUse) and then treated
    as calls; else a leak note while fewer than LEAK_NOTES were spent in a row, then the text is
    the answer; no text and no call: the length note after a length stop, else the no-answer note."""
    if calls == 0 and leaks and all(leaks):
        return ("truncated", "length", 0) if stop == "length" else ("run_calls", "toolUse", 0)
    if calls > 0:
        return ("truncated" if stop == "length" else "run_calls", stop, 0)
    if leaks:
        return ("leak_retry", stop, notes + 1) if notes < LEAK_NOTES else ("answer", stop, 0)
    if not text_blank:
        return ("answer", stop, 0)
    return ("length_note" if stop == "length" else "no_answer", stop, 0)


# The entries (infer_*_ffi_*: "every request whose numbers fit the wire"): the widths of the
# numbers each compiled model takes (attempts, retries, windows, chunk ids: u32; tokens: u64).
ENTRY_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "force_flag": (("attempt", "u32"), ("supported", "bool"), ("free", "bool")),
    "force_after": (("attempt", "u32"), ("retries", "u32"), ("called", "bool")),
    "guard_start": (("limit", "u32"),),
    "guard_feed": (("limit", "u32"), ("ids", "u32s")),
    "threshold_over": (("enabled", "bool"), ("window", "u64"), ("reserve", "u64"), ("margin", "u64"), ("tokens", "u64")),
}
WIDTHS = {"u32": 2**32 - 1, "u64": 2**64 - 1}


def entry_error_says(request: dict[str, object]) -> str | None:
    """The exact error a request gets (None: it fits): the entry, then each field in order
    (missing, not a natural or boolean, past the width), then a field the entry lacks."""
    op = request.get("op")
    if not isinstance(op, str) or op not in ENTRY_FIELDS:
        return f"EntryError::Op({op if isinstance(op, str) else '?'})"
    for name, kind in ENTRY_FIELDS[op]:
        if name not in request:
            return f"EntryError::Missing({op}.{name})"
        value = request[name]
        values = value if kind == "u32s" and isinstance(value, (list, tuple)) else [value]
        if kind == "u32s" and not isinstance(value, (list, tuple)):
            return f"EntryError::Type({op}.{name})"
        for item in values:
            if kind == "bool":
                if type(item) is not bool:
                    return f"EntryError::Type({op}.{name})"
            elif type(item) is not int or item < 0:
                return f"EntryError::Type({op}.{name})"
            elif item > WIDTHS["u64" if kind == "u64" else "u32"]:
                return f"EntryError::Range({op}.{name})"
    extra = sorted(k for k in request if k != "op" and k not in dict(ENTRY_FIELDS[op]))
    return f"EntryError::Unknown({op}.{extra[0]})" if extra else None


# "S6 tool-call argument repair" item 4: the alternate spellings of each declared type, and what
# each reads as (None: not a spelling of it, left to validation).
def spelling_says(kind: str, value: object, items: str | None = None) -> tuple[bool, object]:
    import json as _json

    if kind == "string" and isinstance(value, bool):
        return True, "true" if value else "false"
    if kind == "string" and isinstance(value, (int, float)):
        return True, _json.dumps(value)
    if not isinstance(value, str):
        return False, value
    if kind in ("object", "array"):
        try:
            parsed = _json.loads(value)
        except ValueError:
            parsed = None
        if (kind == "object" and isinstance(parsed, dict)) or (kind == "array" and isinstance(parsed, list)):
            return True, parsed
        if kind == "array" and items == "string":
            return True, [value]
        return False, value
    if kind == "boolean" and value.strip().lower() in ("true", "false"):
        return True, value.strip().lower() == "true"
    if kind == "integer" and value.strip().lstrip("+-").isdigit() and value.strip().isascii():
        return True, int(value)
    if kind == "number":
        if not value.isascii() or "_" in value:
            return False, value
        try:
            number = float(value)
        except ValueError:
            return False, value
        if value.strip().lower() in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity") or number != number or number in (float("inf"), float("-inf")):
            return False, value
        return True, int(value) if value.strip().lstrip("+-").isdigit() else number
    return False, value


# item 2: what cannot be read keeps at most this much of the raw text.
RAW_JSON_KEPT = 512
# item 6: tool_unavailable names at most 3 offered tools.
UNAVAILABLE_NAMED = 3


def chunks_says(text: str, max_bytes: int = MAX_CHUNK_BYTES) -> tuple[list[str], str]:
    """S6.5 "Chunk = one complete non-blank output line; lines over 4096 bytes (MAX_CHUNK_BYTES) split
    there on a character boundary": the chunks of a block's text and what is still partial. A line
    ends at its newline (a carriage return before it is not part of the line: derived, as Rust's
    lines()); a piece is the longest run of whole characters within the byte limit; a line still
    open gives the pieces that are past the limit."""
    lines = text.split("\n")
    chunks: list[str] = []
    for i, line in enumerate(lines):
        complete = i < len(lines) - 1
        if complete and line.endswith("\r"):
            line = line[:-1]
        while line.encode("utf-8", "surrogatepass") and (len(line.encode("utf-8", "surrogatepass")) > max_bytes or complete):
            size, take = 0, 0
            while take < len(line) and size + len(line[take].encode("utf-8", "surrogatepass")) <= max_bytes:
                size += len(line[take].encode("utf-8", "surrogatepass"))
                take += 1
            take = max(take, 1)
            if line[:take].strip():
                chunks.append(line[:take])
            line = line[take:]
        if not complete:
            return chunks, line
    return chunks, ""  # never reached: split gives at least one piece


# "S6 tool-call argument repair" item 1: what the final parse reads and what it refuses.
REPAIRS_READ: tuple[tuple[str, object], ...] = (
    ('{"a": "x\ty"}', {"a": "x\ty"}),  # a raw control character
    ('{"a": "\\q"}', {"a": "\\q"}),  # an invalid string escape
    ('{"a": "x\\ny\tz"}', {"a": "x\ny\tz"}),  # a valid escape kept beside a raw control character
    ('{"a": "\\u00e9\\\\\\"\t"}', {"a": "é\\\"\t"}),  # a \u escape, an escaped backslash and quote
    ('{"a": "\\uZZ\t"}', {"a": "\\uZZ\t"}),  # \u without four hex digits: an invalid escape
    ("{'a': 'b'}", {"a": "b"}),  # single quotes
    ("{a: 1}", {"a": 1}),  # an unquoted key
    ("{a: 1 /* c */} // d", {"a": 1}),  # comments
    ("{a: True, b: False, c: None}", {"a": True, "b": False, "c": None}),
    ("{a: [1,, 2,],}", {"a": [1, 2]}),  # stray and trailing commas
    ("{a: 0x10, b: 0b11}", {"a": 16, "b": 3}),
    ("{a: hello there}", {"a": "hello there"}),  # an unquoted value
)
REPAIRS_REFUSED: tuple[str, ...] = (
    '{"a": 1',  # truncation
    "{a: 1} b",  # trailing characters
    "{a: NaN}",
    "{a: 1e999}",  # non-finite numbers
    "{a: b: 1}",  # an unquoted value that can hide the next field
    "{a: x 'y': 1}",
)


# -- the wire (S6.3 forced choice, S6.4 strict schemas, S6.10 stop reasons) -----------------------------
# Where each built wire API carries what S6 decides, transcribed from the APIs' own references (the
# forms the vendors' SDKs in the dev extra type: openai's ResponseCreateParams and chat types,
# anthropic's MessageCreateParams, google-genai's types, mistralai's ConversationStreamRequest,
# botocore's bedrock-runtime service model): the infer laws read the bodies the clients send and the
# replies they decode with these.

API_CHAT, API_RESPONSES, API_ANTHROPIC, API_GOOGLE = "openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"
API_AZURE, API_CODEX, API_VERTEX, API_MISTRAL = "azure-openai-responses", "openai-codex-responses", "google-vertex", "mistral-conversations"
API_BEDROCK = "bedrock-converse-stream"

# The body form each wire API speaks. Azure OpenAI's v1 Responses API and the ChatGPT backend's
# Codex path take the Responses body (openai's ResponseCreateParams; Codex: store false, no
# max_output_tokens, neither read here); Vertex takes the Gemini API's GenerateContentRequest
# (google-genai's types serve both); Mistral Conversations (ConversationStreamRequest) and Bedrock
# Converse (ConverseStream's request shape) have their own.
CHAT, RESPONSES, ANTHROPIC, GEMINI, MISTRAL, CONVERSE = "chat", "responses", "anthropic", "gemini", "mistral", "converse"
FORM: dict[str, str] = {
    API_CHAT: CHAT,
    API_RESPONSES: RESPONSES,
    API_AZURE: RESPONSES,
    API_CODEX: RESPONSES,
    API_ANTHROPIC: ANTHROPIC,
    API_GOOGLE: GEMINI,
    API_VERTEX: GEMINI,
    API_MISTRAL: MISTRAL,
    API_BEDROCK: CONVERSE,
}

# Mistral Conversations names no tool in its choice: CompletionArgs.tool_choice is a ToolChoiceEnum
# (auto, none, any, required), and any and required make the model call a tool. S6.3 maps a forced
# tool to native choice in every wire API (ToolChoice Tool(name), "mapped in every wire API") and
# names the tool in the soft prompt that ends every forced request: on Mistral the native choice of
# a forced call is a forcing value, the offered tool named by the soft prompt.
MISTRAL_FORCING: tuple[str, ...] = ("any", "required")


def forced_says(api: str, body: dict[str, Any], tool: str) -> bool | None:
    """Whether the body sets native forced choice of ``tool`` (S6.3), in the API's own form; None
    when it sets some other choice (never right)."""
    form = FORM[api]
    if form == GEMINI:
        config = body.get("toolConfig", {}).get("functionCallingConfig")
        if config is None or config.get("mode") != "ANY":
            return False
        return True if config == {"mode": "ANY", "allowedFunctionNames": [tool]} else None
    if form == MISTRAL:
        choice = body.get("completion_args", {}).get("tool_choice")
        if choice is None:
            return False
        return True if choice in MISTRAL_FORCING and tool in tool_names_says(api, body) else None
    if form == CONVERSE:
        choice = body.get("toolConfig", {}).get("toolChoice")
        if choice is None:
            return False
        return True if choice == {"tool": {"name": tool}} else None
    choice = body.get("tool_choice")
    if choice is None:
        return False
    want = {
        CHAT: {"type": "function", "function": {"name": tool}},
        RESPONSES: {"type": "function", "name": tool},
        ANTHROPIC: {"type": "tool", "name": tool},
    }[form]
    return True if choice == want else None


def tool_names_says(api: str, body: dict[str, Any]) -> tuple[str, ...]:
    """The tools a body offers, in order."""
    form = FORM[api]
    if form == GEMINI:
        return tuple(d["name"] for entry in body.get("tools", []) for d in entry["functionDeclarations"])
    if form in (CHAT, MISTRAL):  # {type: function, function: {name, ...}}
        return tuple(t["function"]["name"] for t in body.get("tools", []))
    if form == CONVERSE:
        return tuple(t["toolSpec"]["name"] for t in body.get("toolConfig", {}).get("tools", []))
    return tuple(t["name"] for t in body.get("tools", []))


def tool_descriptions_says(api: str, body: dict[str, Any]) -> tuple[str | None, ...]:
    """Each offered tool's description, in order (None where the body gives none)."""
    form = FORM[api]
    if form == GEMINI:
        return tuple(d.get("description") for entry in body.get("tools", []) for d in entry["functionDeclarations"])
    if form in (CHAT, MISTRAL):
        return tuple(t["function"].get("description") for t in body.get("tools", []))
    if form == CONVERSE:
        return tuple(t["toolSpec"].get("description") for t in body.get("toolConfig", {}).get("tools", []))
    return tuple(t.get("description") for t in body.get("tools", []))


def strict_says(api: str, body: dict[str, Any]) -> tuple[bool, ...] | None:
    """Each offered tool's strict flag (S6.4) where the API has one per tool (chat
    function.strict, Responses strict, Anthropic strict, Mistral function.strict, Bedrock
    toolSpec.strict: true or, where the reference makes it optional, absent); None for Gemini's
    form, whose strict mode is the request's (``validated_says``)."""
    form = FORM[api]
    if form == CHAT:
        return tuple(t["function"]["strict"] is True for t in body.get("tools", []))
    if form == RESPONSES:
        return tuple(t["strict"] is True for t in body.get("tools", []))
    if form == ANTHROPIC:
        return tuple(t.get("strict", False) is True for t in body.get("tools", []))
    if form == MISTRAL:
        return tuple(t["function"].get("strict", False) is True for t in body.get("tools", []))
    if form == CONVERSE:
        return tuple(t["toolSpec"].get("strict", False) is True for t in body.get("toolConfig", {}).get("tools", []))
    return None


def validated_says(body: dict[str, Any]) -> bool:
    """Gemini's form: function calling in VALIDATED mode (schemas enforced) for the request."""
    return bool(body.get("toolConfig", {}).get("functionCallingConfig", {}).get("mode") == "VALIDATED")


def last_user_text_says(api: str, body: dict[str, Any]) -> str:
    """The text of the request's last user turn (where S6.3's soft prompt goes)."""
    form = FORM[api]
    if form == GEMINI:
        turns = [c for c in body["contents"] if c["role"] == "user"]
        return "".join(p.get("text", "") for p in turns[-1]["parts"])
    if form == MISTRAL:
        inputs = body["inputs"]  # ConversationInputs: a string (one user message) or entries
        if isinstance(inputs, str):
            return inputs
        items = [i for i in inputs if i.get("type", "message.input") == "message.input"]
    elif form == RESPONSES:
        items = body["input"]
    else:  # chat, Anthropic and Converse messages (Converse's text blocks are {text})
        items = body["messages"]
    users = [i for i in items if i.get("role") == "user"]
    content = users[-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)  # text blocks: input_text, text, {text}


# S6.10 reads the stop reason a reply ends with. OpenAI Responses (and so Azure and Codex) and
# Gemini (and so Vertex) have no tool-use stop value: a completed response (finishReason STOP) with
# calls reads toolUse, without calls stop; chat completions, Anthropic and Bedrock spell each
# (finish_reason tool_calls, stop_reason tool_use, stopReason tool_use). Mistral's stream has no
# finish reason at all (conversation.response.done carries usage only): it cannot say length, so
# every reply it ends reads toolUse with calls, else stop.
TOOL_STOP_SPELLED: dict[str, bool] = {
    API_CHAT: True,
    API_RESPONSES: False,
    API_AZURE: False,
    API_CODEX: False,
    API_ANTHROPIC: True,
    API_GOOGLE: False,
    API_VERTEX: False,
    API_MISTRAL: False,
    API_BEDROCK: True,
}
LENGTH_SPELLED: dict[str, bool] = {api: api != API_MISTRAL for api in FORM}


def decoded_stop_says(api: str, sent: str, calls: int) -> str:
    """The stop reason a reply the server ended with ``sent`` (stop, length, toolUse) reads as."""
    if sent == "length" and LENGTH_SPELLED[api]:
        return sent
    if sent != "length" and TOOL_STOP_SPELLED[api]:
        return sent
    return "toolUse" if calls else "stop"
