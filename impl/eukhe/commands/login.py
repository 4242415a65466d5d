"""`eukhe login PROVIDER`: store a provider's API key in the agent dir's auth.json.

    eukhe [--agent-dir D] login PROVIDER      the key from stdin: typed without echo on a terminal
                                              (getpass), else the first line of what is piped in

auth.json (control.md S4b.1, ``eukhe.settings.config.AuthStorage``) holds one credential per
provider, ``{"<provider>": {"type": "api_key", "key": "<key>"}}``; the other providers' entries
stay as they are. It is written as every config document is (``eukhe.settings.files``): under its
lock, to a temporary file created 0600 in the agent dir (made 0700 when it is missing), fsynced,
renamed over auth.json: the key is never readable by others, not even for a moment, and a crash
leaves the old file or the new one. ``eukhe ask`` and ``eukhe chat`` read it after a provider's
models.json apiKey and before ``<PROVIDER>_API_KEY``.

Bad input is one line and exit 2, nothing written: an unknown provider, a provider of
models.json (its key is models.json's apiKey), an empty key, a key with spaces or control
characters, a key that is not UTF-8. An auth.json that cannot be read or parsed is never written
over (exit 2, or 1 when the file cannot be read at all); a directory that cannot be written is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from eukhe import paths
from eukhe.cli import UsageError, require_dir, show_path

AGENT_DIR_MODE = 0o700


def register(sub: Any) -> None:
    p = sub.add_parser("login", help="store a provider's API key in auth.json (read from stdin; no echo on a terminal)")
    p.add_argument("provider", help="the provider id, as `eukhe model list` shows it (e.g. openai, anthropic)")
    p.set_defaults(run=run_login)


def _read_key(provider: str) -> str:
    """The key typed on the terminal without echo, or the first line piped in."""
    if sys.stdin is not None and sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"API key for {provider}: ")
    stream = getattr(sys.stdin, "buffer", None)
    raw = stream.readline() if stream is not None else b""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"eukhe login: the key is not UTF-8 text (at byte {error.start}); nothing written") from None


def run_login(args: argparse.Namespace) -> int:
    from eukhe.inference import catalog
    from eukhe.settings.config import AUTH_FILE, AuthStorage

    agent = paths.agent_dir(args.agent_dir)
    require_dir(agent, "the agent dir")
    reg = catalog.registry(agent)
    if args.provider in reg.custom_providers:
        raise UsageError(f"eukhe login: {args.provider} is a provider of models.json: its key is that file's apiKey; nothing written")
    known = sorted({m.provider for m in reg.models})
    if args.provider not in known:
        raise UsageError(f"eukhe login: unknown provider {args.provider!r} (providers: {', '.join(known)}); nothing written")
    key = _read_key(args.provider).strip("\r\n")
    if not key.strip():
        raise UsageError(f"eukhe login: the key is empty; nothing written for {args.provider}")
    if any(char.isspace() or not char.isprintable() for char in key):
        raise UsageError("eukhe login: the key holds spaces or control characters (a key is one word); nothing written")
    os.makedirs(agent, mode=AGENT_DIR_MODE, exist_ok=True)  # a new one private from the start: it will hold a credential
    target = agent / AUTH_FILE
    AuthStorage(target).set(args.provider, {"type": "api_key", "key": key})
    print(f"the key of {args.provider} is stored in {show_path(target)}")
    return 0
