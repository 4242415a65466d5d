"""`eukhe effort offered|clamp|cycle`: the reasoning-depth rules (inference.md S10) at work.

    eukhe effort offered --map '{"xhigh": "xhigh", "minimal": null}' --reasoning
    eukhe effort clamp --map '{}' --reasoning --level max
    eukhe effort cycle --map '{}' --reasoning --level high [--backward]

Answers print as JSON (a cycle with no step answers null, as the daemon does).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from eukhe import effort
from eukhe.cli import UsageError


def register(sub: Any) -> None:
    top = sub.add_parser("effort", help="reasoning depth: offered levels, clamp and cycle (S10)")
    verbs = top.add_subparsers(dest="verb", required=True, parser_class=type(top), metavar="VERB")
    for verb, text in (
        ("offered", "the levels a model offers, in ladder order"),
        ("clamp", "the offered level a requested level becomes"),
        ("cycle", "one offered step from the clamp of a level, or null"),
    ):
        p = verbs.add_parser(verb, help=text)
        p.add_argument("--map", default="null", help="the model's thinkingLevelMap as a JSON object of level -> wire string or null (default null: no map)")
        p.add_argument("--reasoning", action="store_true", help="the model reasons (without it only off is offered)")
        if verb != "offered":
            p.add_argument("--level", required=True, help="a level: " + ", ".join(effort.LEVELS))
        if verb == "cycle":
            p.add_argument("--backward", action="store_true", help="step backward (default: forward)")
        p.set_defaults(run=run)


def _model(args: argparse.Namespace) -> effort.CatalogModel:
    from eukhe.cli import load_json

    raw = args.map.strip()
    value = load_json(raw, "--map")  # strict JSON, bounded depth, before the map's own checks
    level_map = None if value is None else effort.parse_map(value)
    return effort.CatalogModel("cli", args.reasoning, level_map)


def run(args: argparse.Namespace) -> int:
    try:
        offer = _model(args).offered()
        if args.verb == "offered":
            answer: object = list(offer)
        elif args.verb == "clamp":
            answer = effort.clamp(offer, effort.parse_level(args.level))
        else:
            answer = effort.cycle(offer, effort.parse_level(args.level), not args.backward)
    except effort.EffortError as error:
        raise UsageError(f"eukhe effort {args.verb}: {error}") from error
    print(json.dumps(answer))
    return 0
