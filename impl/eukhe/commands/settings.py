"""Settings on the command line (control.md S4, S4b).

    eukhe set ID VALUE [--global] [--session ID]   a set of the session's agent, or of the global config.cfg
    eukhe toggle ID [--global] [--session ID]      flip a Bool cvar (--global: the global layer only)
    eukhe cvar 'LINE' --session ID                 run a command line on the session's agent
    eukhe cvar save --session ID                   write the agent's persist sets to agents/<name>.cfg
    eukhe settings show [--session ID]             effective values, the layer of each, settings errors
    eukhe mcp add NAME ENTRY_JSON | eukhe mcp remove NAME

A session set needs ``--session`` (the session of the sessions dir, agent ``main``); without a
session only ``--global`` sets. A refused set prints ``CvarError::<kind>(<id>): <message>``; a
document that cannot be read prints its path and what is wrong; both exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eukhe import paths
from eukhe.cli import UsageError, clip, require_dir
from eukhe.session import Store
from eukhe.settings import config as configmod
from eukhe.settings.agent import CvarAgent, EukheSettings
from eukhe.settings.cvar import canonical
from eukhe.settings.files import read_document


def register(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--session", help="the session whose agent sets (its id in the sessions dir; agent main)")
    common.add_argument("--session-dir", help="the sessions dir (S4b.7; else EUKHE_SESSION_DIR, sessionDir, <agent dir>/sessions)")
    common.add_argument("--project", default=".", help="the project dir whose .eukhe/ files apply (default: the working dir)")
    p = sub.add_parser("set", parents=[common], help="set a cvar: the session's agent, or --global")
    p.add_argument("id", help="a declared cvar id, such as retry.maxRetries (see `eukhe settings show`)")
    p.add_argument("value", help="a value word of the cvar's type: true|false, a whole number, a string, an enum word, or JSON for a List or Map")
    p.add_argument("--global", dest="is_global", action="store_true", help="write the global config.cfg instead of a session's agent")
    p.set_defaults(run=run_set)
    p = sub.add_parser("toggle", parents=[common], help="flip a Bool cvar")
    p.add_argument("id", help="a declared Bool cvar id, such as retry.enabled")
    p.add_argument("--global", dest="is_global", action="store_true", help="flip the global layer only")
    p.set_defaults(run=run_toggle)
    p = sub.add_parser("cvar", parents=[common], help="run a command line (or 'save') on the session's agent")
    p.add_argument("line", help="a command-language line (set/toggle/alias/bind/action, ';' between commands), or 'save'")
    p.set_defaults(run=run_cvar)
    p = sub.add_parser("settings", help="the effective settings")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p), metavar="VERB")
    show = verbs.add_parser("show", parents=[common], help="effective values, their layers, and the settings errors")
    show.set_defaults(run=run_show)
    p = sub.add_parser("mcp", help="mcpServers entries of the global settings.json")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p), metavar="VERB")
    add = verbs.add_parser("add", help="add or replace an entry (a JSON object)")
    add.add_argument("name", help="the server's name: the key under mcpServers (not empty)")
    add.add_argument("entry", help='the entry as a JSON object, e.g. \'{"command": "srv"}\'')
    add.set_defaults(run=run_mcp)
    rm = verbs.add_parser("remove", help="remove an entry")
    rm.add_argument("name", help="the name of an existing entry")
    rm.set_defaults(run=run_mcp)


def _settings(args: argparse.Namespace) -> EukheSettings:
    agent = paths.agent_dir(args.agent_dir)
    require_dir(agent, "the agent dir")
    project = Path(getattr(args, "project", "."))
    require_dir(project, "--project", missing_ok=False)
    return EukheSettings(agent, project.resolve())


def _value(settings: EukheSettings, cvar: str, text: str) -> str:
    """A List or Map value is strict JSON (no NaN, no lone surrogates) before the settings parse it."""
    from eukhe.cli import load_json
    from eukhe.settings.cvar import LIST, MAP

    decl = settings.registry.get(cvar)
    if decl is not None and decl.type.kind in (LIST, MAP):
        load_json(text, f"the value of {cvar}")
    return text


@contextmanager
def _agent(args: argparse.Namespace, settings: EukheSettings) -> Iterator[CvarAgent]:
    if not args.session:
        raise UsageError(f"eukhe {args.command}: a session set needs --session ID (or --global for the global config.cfg)")
    root = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    require_dir(root, "the sessions dir")
    with Store(root).open(args.session, writer=True) as session:
        yield CvarAgent(settings, session.conversation("main"))


def run_set(args: argparse.Namespace) -> int:
    settings = _settings(args)
    text = _value(settings, args.id, args.value)
    if args.is_global:
        value = settings.set_global(args.id, text)
        print(f"{args.id} = {canonical(value)} (global config.cfg)")
        return 0
    with _agent(args, settings) as agent:
        value = agent.set(args.id, text)
    print(f"{args.id} = {canonical(value)} (session {args.session})")
    return 0


def run_toggle(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.is_global:
        value = settings.toggle_global(args.id)
        print(f"{args.id} = {canonical(value)} (global config.cfg)")
        return 0
    with _agent(args, settings) as agent:
        value = agent.toggle(args.id)
    print(f"{args.id} = {canonical(value)} (session {args.session})")
    return 0


def run_cvar(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _agent(args, settings) as agent:
        if args.line.strip() == "save":
            for cvar, value in agent.save():
                print(f"saved {cvar} = {canonical(value)}")
            return 0
        outcomes = agent.run_line(args.line)
    refused = []
    for command, outcome in outcomes:
        print(f"{command} -> {outcome}")
        if outcome.startswith(("CvarError", "ParseError", "ExpandError")):
            refused.append(f"{command} -> {outcome}")
    if refused:
        raise UsageError(f"eukhe cvar: {len(refused)} of {len(outcomes)} commands refused; the first: {refused[0]}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    settings = _settings(args)
    family = []
    errors = list(settings.config.errors)
    if args.session:
        root = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
        require_dir(root, "the sessions dir")
        with Store(root).open(args.session, writer=False) as session:
            agent = CvarAgent(settings, session.conversation("main"))
            family = agent.family()
            errors = agent.errors()
    for decl in settings.registry:
        found = settings.cvars.sourced(family, decl.id)
        assert found is not None
        print(f"{decl.id} = {canonical(found[0])}  [{found[1]}]")
    for name, entry in settings.config.servers.items():
        print(f"mcpServers.{name} = {canonical(entry)}")
    warning = settings.config.trust_warning()
    if warning:
        print(warning)
    for error in errors:
        print(clip(f"settings error: {error.show()}"), file=sys.stderr)
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    from eukhe.cli import load_json

    agent = paths.agent_dir(args.agent_dir)
    require_dir(agent, "the agent dir")
    target = agent / configmod.SETTINGS_FILE
    if not args.name.strip():
        raise UsageError(f"eukhe mcp {args.verb}: a server name is not empty")
    if args.verb == "add":
        entry = load_json(args.entry, "the entry")
        if not isinstance(entry, dict):
            raise UsageError(f"eukhe mcp add: the entry is a JSON object, not {type(entry).__name__}")
        configmod.mcp_add(target, args.name, entry)
        print(f"mcpServers.{args.name} added in {target}")
        return 0
    servers = read_document(target).get("mcpServers")
    if not isinstance(servers, dict) or args.name not in servers:
        raise UsageError(f"eukhe mcp remove: {target} has no mcpServers entry {args.name!r}; nothing written")
    configmod.mcp_remove(target, args.name)
    print(f"mcpServers.{args.name} removed in {target}")
    return 0
