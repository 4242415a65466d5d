"""The inference layer on the command line (inference.md S6).

    eukhe model list [--bundled FILE]              the catalog (compiled, bundled, models.json);
                                                   models.json diagnostics on stderr
    eukhe provider caps [PROVIDER]                 each capability's dialect (no request made)
    eukhe quirks query MODEL [--provider P] [--base-url U] [--api A] [--name N]
                                                   the family, the hosts, every directive's
                                                   answer and the layer it came from

Bad input (an unknown provider, an empty model id, a damaged rulebook) is one line on stderr
and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from eukhe import paths
from eukhe.cli import UsageError
from eukhe.inference import capabilities, catalog, ladder, quirks


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


def _guard(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            status: int = fn(args)
        except (quirks.QuirksError, quirks.RulebookError, catalog.CatalogError) as error:
            raise UsageError(f"eukhe {args.command} {args.verb}: {error}") from error
        return status

    return run


def _registry(args: argparse.Namespace) -> catalog.Registry:
    bundled = Path(args.bundled) if getattr(args, "bundled", None) else None
    if bundled is not None and not bundled.exists():
        raise UsageError(f"eukhe model list: --bundled {bundled}: no such file")
    return catalog.registry(paths.agent_dir(args.agent_dir), bundled)


def run_model_list(args: argparse.Namespace) -> int:
    reg = _registry(args)
    book = quirks.shipped()
    for problem in reg.diagnostics:
        print(f"models.json: {problem}" if not problem.startswith(("models.json", "/")) else problem, file=sys.stderr)
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
