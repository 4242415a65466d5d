"""Deliberate breaks of ``eukhe chat`` and ``eukhe login`` (impl/eukhe/commands/chat.py,
login.py) that only the cli bridge's later edge scenarios catch (``bridge.cli.EDGES`` past
scenario 0315; ``EUKHE_BREAK=<name> python -m bridge replay cli scenarios/cli/NNNN.jsonl``).

The classes: a chat whose standard input fails mid-way (a Unix socket reset by its peer once the
lines were sent): the failed read is the end of input, and the last line, which has no newline,
is still a turn (0316); ``login`` on a terminal, the key typed without echo (0317)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "cli_chat_failed_read_drops_last_line",
        "cli",
        "eukhe.commands.chat",
        '            data = b""\n        if not data:\n',
        '            data = b""\n            pending.clear()\n        if not data:\n',
        "production: a chat whose input fails mid-way (ECONNRESET) drops the last line, which has no newline, instead of taking it.",
    ),
    Break(
        "cli_login_terminal_key_lost",
        "cli",
        "eukhe.commands.login",
        '        return getpass.getpass(f"API key for {provider}: ")\n',
        '        return getpass.getpass(f"API key for {provider}: ")[:0]\n',
        "production: `login` on a terminal loses the key typed without echo (taken as empty: exit 2).",
    ),
]
