"""The inference layer on the command line (inference.md S6).

    eukhe model list [--bundled FILE]              the catalog (compiled, bundled, models.json);
                                                   models.json diagnostics on stderr
    eukhe provider caps [PROVIDER]                 each capability's dialect (no request made)
    eukhe quirks query MODEL [--provider P] [--base-url U] [--api A] [--name N]
                                                   the family, the hosts, every directive's
                                                   answer and the layer it came from
    eukhe ask [--provider P] [--model M] [--thinking L] [--timeout S] TEXT
                                                   stream one reply of the provider's model

Bad input (an unknown provider, an empty model id, an --api that is no wire API, a damaged
rulebook, a --bundled file that is missing, a directory, not UTF-8 or not a catalog) is one line
on stderr and exit status 2; a --bundled file that cannot be read is 1. models.json's problems
are warnings (``eukhe model list: <file>: ...``) and the catalog goes on without what they name.
``eukhe ask`` reads the provider from --provider, else defaultProvider; the
model from --model, else defaultModel (of that provider), else the rulebook's provider default,
else the provider's first model; the base URL from the catalog or models.json; the key from
models.json's apiKey, else auth.json (``eukhe login``), else <PROVIDER>_API_KEY. --timeout is a
finite number of seconds above 0. A retry setting or retry.provider.streamRepeatLimit past the
largest value its use takes (written by hand in a document: a set refuses it) is a settings error,
exit 2, before any request. Every event is read by ``eukhe.strict_json``: one that is not JSON,
nested more than 100 brackets deep or holding NaN is a fault of the provider. It streams the reply through the
repetition guard (when eukhe.inference.guard is present) and shows tool calls; a fault of the
provider or the connection (an HTTP error, no connection, a timeout, a cut stream, a repeating
stream, no credentials) is one line naming the provider and the reason, exit status 1. A
retryable fault before any of the reply arrived is retried as the retry.* settings say
(``eukhe.inference.wire.retry``), each retry one line on stderr (``eukhe ask: retry 1/3: ...``);
the requests of one ask share one HTTP client (``eukhe.inference.wire.pool``). A
refusal of the model (the refusal stop, inference.md S6.10) prints ``[refused] <its text>``
after whatever came before it, and one line on stderr: exit status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eukhe import paths
from eukhe.cli import CliError, EnvironmentFault, UsageError, clip, show_path
from eukhe.inference import capabilities, catalog, ladder, quirks
from eukhe.inference.resolve import NoModel, resolve_model

if TYPE_CHECKING:  # the wire (httpx) is imported only when `eukhe ask` runs
    from eukhe.inference.wire.events import StreamFilter


def register(sub: Any) -> None:
    p = sub.add_parser("model", help="the model catalog (S6 the built-in model catalog, models.json)")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p))
    listing = verbs.add_parser("list", help="every model of the catalog; models.json diagnostics on stderr")
    listing.add_argument("--bundled", help="a models.bundled.json to union with the compiled catalog")
    listing.set_defaults(run=_guard(run_model_list))

    p = sub.add_parser("provider", help="provider operations beyond chat (S6.7)")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p))
    caps = verbs.add_parser("caps", help="the eight capabilities of a provider (or of every provider); no request")
    caps.add_argument("provider", nargs="?", help="one provider id (default: every provider)")
    caps.set_defaults(run=_guard(run_provider_caps))

    p = sub.add_parser("quirks", help="the quirks rulebook (S6.1)")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p))
    query = verbs.add_parser("query", help="every directive's answer for a model, with the layer it came from")
    query.add_argument("model", help="the model id to ask the rulebook about")
    query.add_argument("--provider", default="", help="the provider id")
    query.add_argument("--base-url", default="", help="the provider's base URL")
    query.add_argument("--api", default="", help="the wire API")
    query.add_argument("--name", default=None, help="the model's display name")
    query.set_defaults(run=_guard(run_quirks_query))

    p = sub.add_parser("ask", help="stream one reply of a provider's model to the terminal (S6 wire APIs)")
    p.add_argument("text", help="the user message")
    p.add_argument("--provider", default=None, help="the provider id (default: the defaultProvider setting)")
    p.add_argument("--model", default=None, help="the model id (default: defaultModel, else the provider's default model)")
    p.add_argument("--thinking", default=None, help="the thinking level (default: the defaultThinkingLevel setting)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds without a byte before the request fails (a finite number above 0; default 120)")
    p.add_argument("--show-thinking", action="store_true", help="print the model's thinking before its answer")
    p.add_argument("--usage", action="store_true", help="print the token counts on stderr after the reply")
    p.set_defaults(run=run_ask)


def _guard(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            status: int = fn(args)
        except (quirks.QuirksError, quirks.RulebookError, catalog.CatalogError) as error:
            raise UsageError(f"eukhe {args.command} {args.verb}: {error}") from error
        return status

    return run


def _check_bundle(bundled: Path) -> None:
    """The bundle --bundled names, read and parsed before the catalog takes it: a path that names
    no file, or a file that is not a catalog (not UTF-8, not JSON, deeper than 100 brackets, NaN,
    not of the catalog's form) is bad input (exit 2); a file that cannot be read is a fault of the
    environment (exit 1). The catalog would take either as a warning and go on without it."""
    shown = f"eukhe model list: --bundled {show_path(bundled)}"
    if not bundled.exists():
        raise UsageError(f"{shown}: no such file")
    if bundled.is_dir():
        raise UsageError(f"{shown}: is a directory, not a models.bundled.json file")
    try:
        data = bundled.read_bytes()
    except OSError as error:
        raise EnvironmentFault(f"{shown}: cannot read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"{shown}: not UTF-8 at byte {error.start}") from None
    try:
        catalog.parse_catalog(text, "bundled")
    except catalog.CatalogError as error:
        raise UsageError(f"{shown}: not a catalog: {error}") from None


def _registry(args: argparse.Namespace) -> catalog.Registry:
    bundled = Path(args.bundled) if getattr(args, "bundled", None) else None
    if bundled is not None:
        _check_bundle(bundled)
    return catalog.registry(paths.agent_dir(args.agent_dir), bundled)


def run_model_list(args: argparse.Namespace) -> int:
    reg = _registry(args)
    book = quirks.shipped()
    for problem in reg.diagnostics:  # models.json's: each names the file; the catalog goes on without what it names
        where = problem if problem.startswith(("models.json", "/")) else f"models.json: {problem}"
        print(clip(f"eukhe model list: {where}"), file=sys.stderr)
    for model in reg.models:
        key = quirks.ModelKey(model.id, model.name, model.provider, model.api, model.base_url)
        levels = ladder.ladder(book, key, model.reasoning, model.thinking_level_map).offered
        print(f"{model.provider}/{model.id}\t{model.api}\t{model.name}\t{','.join(levels)}\t{model.source}")
    return 0


def _provider_keys(reg: catalog.Registry) -> dict[str, quirks.ModelKey]:
    keys: dict[str, quirks.ModelKey] = {}
    for model in reg.models:
        keys.setdefault(model.provider, quirks.ModelKey(model.id, model.name, model.provider, model.api, model.base_url))
    for provider in reg.custom_providers.values():
        keys[provider.id] = quirks.ModelKey("", None, provider.id, provider.api, provider.base_url)
    return keys


def run_provider_caps(args: argparse.Namespace) -> int:
    reg = catalog.registry(paths.agent_dir(args.agent_dir))
    keys = _provider_keys(reg)
    if args.provider is not None and args.provider not in keys:
        raise UsageError(f"eukhe provider caps: unknown provider {args.provider!r} (providers: {', '.join(sorted(keys))})")
    book = quirks.shipped()
    for provider in [args.provider] if args.provider is not None else sorted(keys):
        caps = capabilities.capabilities_of(book, keys[provider])
        print(provider + "\t" + " ".join(f"{c.name}={c.dialect or 'unsupported'}" for c in caps))
    return 0


def run_quirks_query(args: argparse.Namespace) -> int:
    if not args.model.strip():
        raise UsageError("eukhe quirks query: the model id is empty")
    if args.api and args.api not in catalog.APIS:
        raise UsageError(f"eukhe quirks query: --api {args.api!r} is not a wire API ({', '.join(sorted(catalog.APIS))})")
    book = quirks.shipped()
    compat: dict[str, Any] = {}
    reg = catalog.registry(paths.agent_dir(args.agent_dir))
    known = reg.find(args.provider, args.model) if args.provider else None
    if known is not None:
        compat = quirks.compat_of(known.compat)
    api = args.api or (known.api if known is not None else "")
    key = quirks.ModelKey(args.model, args.name, args.provider, api, args.base_url, compat)
    family = book.family(key.id, key.name)
    print(f"family\t{family.id or ('overlap: ' + ', '.join(family.overlap) if family.overlap else '-')}")
    print(f"host\t{book.host(key.api, key.provider, key.base_url) or '-'}")
    print(f"capabilities host\t{book.host(key.api, key.provider, key.base_url, capabilities=True) or '-'}")
    for directive in quirks.DIRECTIVES:
        answer = book.query(key, directive)
        value = json.dumps(_jsonable(answer.value), ensure_ascii=False) if answer.known else "unknown"
        print(f"{directive}\t{value}\t{answer.layer or '-'}")
    return 0


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return {level: wire for level, wire in value}
    if isinstance(value, tuple):
        return list(value) if value else {}
    return value


# -- eukhe ask ------------------------------------------------------------------------------------------

EXIT_REFUSED = 3


class Refused(CliError):
    """The model declined to answer (the refusal stop): the reply is whole, it is not a fault of
    the environment and not bad input, and a script must not take it for an answer (exit 3)."""

    status = EXIT_REFUSED


@dataclass(frozen=True)
class Connection:
    """What `eukhe ask` and `eukhe chat` set up from their common flags."""

    agent: Path
    settings: Any  # EukheSettings
    model: Any  # WireModel
    level: str
    client: Any  # a wire client whose requests are retried (wire.retry.Retrying)
    pool: Any  # wire.pool.Pool: the HTTP clients of the command, closed in its event loop at its end


RETRY_CVARS = ("retry.maxRetries", "retry.baseDelayMs")


def check_bounds(cvars: Any, used: tuple[str, ...], command: str) -> None:
    """Each natural setting ``used`` is no larger than its use takes (the bound a set takes,
    eukhe.settings.cvar_table.largest): a larger one, written in a document by hand, is a settings
    error, UsageError naming the setting and the layer it came from (never a crash mid-command)."""
    from eukhe.settings.cvar_table import bound_error

    for cvar in used:
        found = cvars.sourced([], cvar)
        why = None if found is None else bound_error(cvar, found[0])
        if why is not None:
            raise UsageError(f"{command}: settings: {cvar} in {found[1]}: {why}; nothing sent")


def connect(args: argparse.Namespace, command: str, notify: Any = None, uses: tuple[str, ...] = ()) -> Connection:
    """The agent directory, the settings, the model (--provider, --model), the reasoning level
    (--thinking, else defaultThinkingLevel, else off) and the wire client (--timeout) on a pool
    of HTTP clients, retrying as the retry.* settings say (``notify`` is told of each retry);
    the retry settings and ``uses`` (more natural settings the command reads) within their
    bounds (``check_bounds``); bad input is a UsageError, a fault of the environment an
    EnvironmentFault, each naming ``command``."""
    from eukhe.effort import EffortError, parse_level
    from eukhe.inference import wire
    from eukhe.inference.wire import events
    from eukhe.inference.wire.pool import Pool
    from eukhe.inference.wire.retry import Policy, Retrying
    from eukhe.settings.agent import EukheSettings

    if not (0 < args.timeout < float("inf")):  # nan, inf (and 1e999, read as inf) wait for ever: refused
        raise UsageError(f"{command}: --timeout must be a positive number of seconds, and finite, not {args.timeout}")
    agent = paths.agent_dir(args.agent_dir)
    settings = EukheSettings(agent, Path.cwd())
    check_bounds(settings.cvars, RETRY_CVARS + uses, command)
    try:
        model = resolve_model(agent, settings.cvars, args.provider, args.model)
    except NoModel as error:
        raise (UsageError if error.usage else EnvironmentFault)(f"{command}: {error}") from None
    except (quirks.QuirksError, catalog.CatalogError) as error:
        raise UsageError(f"{command}: {error}") from error
    try:
        level = parse_level(args.thinking if args.thinking is not None else (settings.cvars.value([], "defaultThinkingLevel") or "off"))
    except EffortError as error:
        raise UsageError(f"{command}: --thinking: {error}") from error
    pool = Pool()
    try:
        client = wire.client_for(model, timeout=args.timeout, pool=pool)
    except events.BadRequest as error:
        raise UsageError(f"{command}: {error}") from error
    policy = Policy.from_settings(lambda cvar: settings.cvars.value([], cvar))
    return Connection(agent, settings, model, level, Retrying(client, policy, notify=notify), pool)


def run_ask(args: argparse.Namespace) -> int:
    import asyncio

    from eukhe.inference import wire
    from eukhe.inference.guard import Guard, StreamRepeating
    from eukhe.inference.wire import events

    if not args.text.strip():
        raise UsageError("eukhe ask: the text is empty")

    def retried(retry: Any) -> None:  # retries come before any of the reply: at a line start
        print(f"eukhe ask: {retry.line()}", file=sys.stderr, flush=True)

    from eukhe.inference.guard import LIMIT_CVAR

    connection = connect(args, "eukhe ask", retried, uses=(LIMIT_CVAR,))
    model, level, client, settings = connection.model, connection.level, connection.client, connection.settings.cvars
    request = wire.Request((wire.Message("user", args.text),), thinking=level)
    out = sys.stdout
    state = {"thinking": False, "text": False}
    refused: list[events.Stop] = []
    guard = Guard.from_settings(lambda cvar: settings.value([], cvar))
    stream_filter: StreamFilter = events.filter_of(guard.feed)

    async def run() -> int:
        # The whole command runs in the coroutine, and run_ask returns what asyncio.run returns: no
        # line of run_ask runs after the event loop (under Python 3.11's tracing, a coroutine that
        # a cancellation is thrown into, as anyio's connect does, leaves the frames that called
        # asyncio.run unmeasured by coverage for the rest of their run).
        try:
            async with connection.pool, wire.closing(client.stream(request, stream_filter)) as stream:
                async for event in stream:
                    if isinstance(event, events.ThinkingDelta) and args.show_thinking:
                        if not state["thinking"]:
                            out.write("[thinking] ")
                            state["thinking"] = True
                        out.write(event.text)
                        out.flush()
                    elif isinstance(event, events.TextDelta):
                        if state["thinking"] and not state["text"]:
                            out.write("\n[answer] ")
                        state["text"] = True
                        out.write(event.text)
                        out.flush()
                    elif isinstance(event, events.ToolCall):
                        out.write(f"\n[tool call] {event.name} {event.arguments}")
                        out.flush()
                    elif isinstance(event, events.Usage) and args.usage:
                        print(f"tokens: input {event.input}, output {event.output}, cache read {event.cache_read}, cache write {event.cache_write}", file=sys.stderr)
                    elif isinstance(event, events.Refusal):
                        if state["text"] or state["thinking"]:
                            out.write("\n")
                        out.write(f"[refused] {event.text or '(the provider gave no reason)'}")
                        out.flush()
                    elif isinstance(event, events.Stop):
                        out.write("\n")
                        if event.reason == events.REFUSAL:
                            refused.append(event)
                        elif event.reason != events.STOP:
                            out.write(f"[stop: {event.reason}]\n")
                        out.flush()
        except events.WireError as error:
            if state["text"] or state["thinking"]:
                out.write("\n")
                out.flush()
            raise EnvironmentFault(f"eukhe ask: {error}") from error
        except StreamRepeating as error:
            out.write("\n")
            out.flush()
            raise EnvironmentFault(f"eukhe ask: {model.provider}: {error}") from error
        if refused:
            raise Refused(f"eukhe ask: {model.provider}: the model refused to answer (stop {refused[0].raw})")
        return 0

    return asyncio.run(run())
