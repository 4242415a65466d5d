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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eukhe import paths
from eukhe.cli import UsageError
from eukhe.session import SessionError, Store
from eukhe.settings import config as configmod
from eukhe.settings.agent import CvarAgent, EukheSettings
from eukhe.settings.cvar import CvarError, ExpandError, ParseError, canonical
from eukhe.settings.files import DocumentError


def register(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--session", help="the session whose agent sets (id in the sessions dir)")
    common.add_argument("--session-dir", help="the sessions dir (S4b.7)")
    common.add_argument("--project", default=".", help="the project dir (default: the working dir)")
    p = sub.add_parser("set", parents=[common], help="set a cvar: the session's agent, or --global")
    p.add_argument("id")
    p.add_argument("value")
    p.add_argument("--global", dest="is_global", action="store_true", help="write the global config.cfg")
    p.set_defaults(run=_guard(run_set))
    p = sub.add_parser("toggle", parents=[common], help="flip a Bool cvar")
    p.add_argument("id")
    p.add_argument("--global", dest="is_global", action="store_true", help="flip the global layer only")
    p.set_defaults(run=_guard(run_toggle))
    p = sub.add_parser("cvar", parents=[common], help="run a command line (or 'save') on the session's agent")
    p.add_argument("line")
    p.set_defaults(run=_guard(run_cvar))
    p = sub.add_parser("settings", help="the effective settings")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p))
    show = verbs.add_parser("show", parents=[common], help="effective values, their layers, and the settings errors")
    show.set_defaults(run=_guard(run_show))
    p = sub.add_parser("mcp", help="mcpServers entries of the global settings.json")
    verbs = p.add_subparsers(dest="verb", required=True, parser_class=type(p))
    add = verbs.add_parser("add", help="add or replace an entry (a JSON object)")
    add.add_argument("name")
    add.add_argument("entry", help='the entry as JSON, e.g. \'{"command": "srv"}\'')
    add.set_defaults(run=_guard(run_mcp))
    rm = verbs.add_parser("remove", help="remove an entry")
    rm.add_argument("name")
    rm.set_defaults(run=_guard(run_mcp))


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except CvarError as error:
            raise UsageError(f"CvarError::{error.kind}({error.id}): {error.message}") from error
        except (ExpandError, ParseError) as error:
            raise UsageError(str(error)) from error
        except DocumentError as error:
            raise UsageError(f"settings error: {error}; nothing written") from error
        except SessionError as error:
            raise UsageError(f"session: {error}") from error

    return run


def _settings(args: argparse.Namespace) -> EukheSettings:
    return EukheSettings(paths.agent_dir(args.agent_dir), Path(getattr(args, "project", ".")).resolve())


@contextmanager
def _agent(args: argparse.Namespace, settings: EukheSettings) -> Iterator[CvarAgent]:
    if not args.session:
        raise UsageError(f"eukhe {args.command}: a session set needs --session ID (or --global for the global config.cfg)")
    root = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
    with Store(root).open(args.session, writer=True) as session:
        yield CvarAgent(settings, session.conversation("main"))


def run_set(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.is_global:
        value = settings.set_global(args.id, args.value)
        print(f"{args.id} = {canonical(value)} (global config.cfg)")
        return 0
    with _agent(args, settings) as agent:
        value = agent.set(args.id, args.value)
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
    status = 0
    for command, outcome in outcomes:
        print(f"{command} -> {outcome}")
        status = 2 if outcome.startswith(("CvarError", "ParseError")) else status
    return status


def run_show(args: argparse.Namespace) -> int:
    settings = _settings(args)
    family = []
    errors = list(settings.config.errors)
    if args.session:
        root = paths.session_dir(args.session_dir, agent_dir_flag=args.agent_dir)
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
        print(f"settings error: {error.show()}", file=sys.stderr)
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    target = paths.agent_dir(args.agent_dir) / configmod.SETTINGS_FILE
    if args.verb == "add":
        try:
            entry = json.loads(args.entry)
        except ValueError as error:
            raise UsageError(f"eukhe mcp add: the entry is not JSON: {error}") from error
        if not isinstance(entry, dict):
            raise UsageError("eukhe mcp add: an entry is a JSON object")
        configmod.mcp_add(target, args.name, entry)
    else:
        configmod.mcp_remove(target, args.name)
    print(f"mcpServers.{args.name} {'added' if args.verb == 'add' else 'removed'} in {target}")
    return 0
