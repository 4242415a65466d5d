"""Key binds (control.md S4.5): ``<agent dir>/binds.cfg``, imported once from keybindings.json.

binds.cfg holds ``bind <key> "<cmds>"`` lines. The user's binds come before the default
binds, and the first bind of a key wins; an empty bind (``bind <key> ""``) turns a default
off; a key with no bind runs nothing. The default actions that share a key share one bind.
When binds.cfg does not exist, eukhe writes it one time from keybindings.json (``{action:
key or [keys]}``): each key gets the actions keybindings.json gave it. A binds.cfg that cannot
be read, a line of it that is not a bind, or an import that cannot be written is a warning
(at startup and at /reload); the defaults still apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from eukhe import strict_json
from eukhe.settings.cfg import BLANK, lines
from eukhe.settings.cvar import BIND, Binds, ParseError, parse_list, quote
from eukhe.settings.files import DocumentError, read_text, update_text

BINDS_FILE = "binds.cfg"
KEYBINDINGS_FILE = "keybindings.json"
# default actions; the ones that share a key share one bind (the screen runs its own action)
DEFAULT_BINDS: tuple[tuple[str, str], ...] = (
    ("ctrl+c", "action app.interrupt; action editor.clear"),
    ("escape", "action app.interrupt"),
    ("ctrl+l", "action app.model.select"),
    ("shift+tab", "action app.thinking.cycle"),
    ("ctrl+t", "action app.thinking.toggle"),
    ("ctrl+o", "action app.tools.expand"),
)


@dataclass
class LoadedBinds:
    binds: Binds
    warnings: list[str] = field(default_factory=list)


def import_lines(keybindings: dict[str, object]) -> list[str]:
    """The binds.cfg lines of keybindings.json: each key with the actions it was given."""
    by_key: dict[str, list[str]] = {}
    for action, keys in keybindings.items():
        for key in [keys] if isinstance(keys, str) else keys if isinstance(keys, list) else []:
            if isinstance(key, str) and key:
                by_key.setdefault(key, []).append(action)
    return [f"bind {quote(key)} {quote('; '.join(f'action {a}' for a in actions))}" for key, actions in by_key.items()]


def load(agent_dir: Path, defaults: tuple[tuple[str, str], ...] = DEFAULT_BINDS) -> LoadedBinds:
    out = LoadedBinds(Binds())
    path = agent_dir / BINDS_FILE
    if not path.exists() and not path.is_symlink():
        source = agent_dir / KEYBINDINGS_FILE
        try:
            text = read_text(source)
            if text is not None:
                parsed = strict_json.loads(text, str(source))
                if not isinstance(parsed, dict):
                    raise ValueError("not a JSON object")
                imported = import_lines(parsed)
                update_text(path, lambda old: old if old else "".join(line + "\n" for line in imported))
        except (DocumentError, ValueError, OSError) as error:
            out.warnings.append(f"warning: {BINDS_FILE} could not be imported from {source}: {error}")
    try:
        user = read_text(path) or ""
    except DocumentError as error:
        out.warnings.append(f"warning: {path} cannot be read ({error.detail or error.kind}); default binds only")
        user = ""
    for number, line in enumerate(lines(user), 1):
        stripped = line.strip(BLANK)
        if not stripped or stripped.startswith("#") or stripped.startswith("//"):
            continue
        try:
            commands = parse_list(stripped)
            for command in commands:
                if command.verb != BIND:
                    raise ParseError(f"{command} is not a bind")
                out.binds.add(command.args[0], command.args[1])
        except ParseError as error:
            out.warnings.append(f"warning: {path}:{number}: {error}")
    for key, body in defaults:
        out.binds.add(key, body)
    return out
