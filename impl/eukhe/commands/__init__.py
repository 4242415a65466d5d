"""Subcommands of `eukhe`: each module defines ``register(subparsers)`` and sets ``run`` on its
parsers (``parser.set_defaults(run=...)``); a run returns the exit status. Raise
``eukhe.cli.UsageError`` for bad input: the CLI prints its one line and exits 2."""
