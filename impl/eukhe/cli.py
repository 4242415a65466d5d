"""The `eukhe` command. Each module of eukhe.commands adds its own subcommands through
``register(subparsers)``, so an area's command line lives beside nothing else.

Bad input gets one line on stderr naming what was wrong, and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import eukhe.commands as commands


class UsageError(Exception):
    """Bad input on the command line: the message names what was wrong."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="eukhe", description="eukhe: the harness core of a coding agent, and its law workbench")
    top.add_argument("--agent-dir", help="the agent dir (default ~/.eukhe, or EUKHE_AGENT_DIR)")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"eukhe.commands.{info.name}").register(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        status: int = args.run(args)
        return status
    except UsageError as error:
        print(str(error).splitlines()[0], file=sys.stderr)
        return 2
