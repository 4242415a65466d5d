"""Subcommands of `eukhe`: each module defines ``register(subparsers)`` and sets ``run`` on its
parsers (``parser.set_defaults(run=...)``); a run returns the exit status. Failures take the one
error path of ``eukhe.cli.main``: raise ``eukhe.cli.UsageError`` for bad input (exit 2) or
``eukhe.cli.EnvironmentFault`` for a fault of the environment (exit 1), or let a typed error of
the library through (``eukhe.cli.classify`` maps it); the CLI prints one line."""
