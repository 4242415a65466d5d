"""Key presses of the terminal UI, through binds.cfg only (control.md S4.5).

The binds are ``eukhe.settings.binds.load``: the user's binds.cfg first, then the default binds
(``DEFAULT_BINDS``, and the editor's own below), so the first bind of a key wins and an empty
bind (``bind enter ""``) turns a default off; a key with no bind runs nothing here (it goes to
the widget that has the focus: typing). binds.cfg is written once from keybindings.json when it
is missing; a binds.cfg that cannot be read, or an import that cannot be written, is a warning
shown at startup and at /reload.

A press (``press``) splits the bind's commands: set, toggle and alias commands go to the session
as one ``cvar`` line; ``action`` commands run in the client. The session's aliases are the
agent's (the eukhe.cvar.agent document), which the client does not hold: a bind that runs an
alias is sent whole (its actions aside) and the session expands it; the actions the expansion
holds come back as ``client-only`` outcomes, and the client runs them then.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from eukhe.settings import binds as binds_cfg
from eukhe.settings.cvar import ACTION, Aliases, Binds, Command, ExpandError, format_list

# the editor's keys, after the seed's defaults; each is a bind the user can change or turn off
EDITOR_BINDS: Final[tuple[tuple[str, str], ...]] = (
    ("enter", "action editor.submit"),
    ("ctrl+j", "action editor.newline"),
    ("shift+enter", "action editor.newline"),
    ("alt+enter", "action editor.followUp"),
    ("tab", "action editor.complete"),
    ("ctrl+d", "action app.quit"),
)
DEFAULTS: Final = binds_cfg.DEFAULT_BINDS + EDITOR_BINDS

# the actions the client runs; an action of a bind not in this table is an error row
ACTIONS: Final[dict[str, str]] = {
    "app.interrupt": "abort the running turn (a picker: close it)",
    "editor.clear": "clear the draft",
    "editor.submit": "send the draft (a running turn: steer it)",
    "editor.newline": "a new line in the draft",
    "editor.followUp": "queue the draft to run after the running turn",
    "editor.complete": "complete a slash command",
    "app.model.select": "the model picker",
    "app.thinking.cycle": "the next offered thinking level",
    "app.thinking.toggle": "show or hide the model's thinking",
    "app.tools.expand": "expand or collapse the tool calls",
    "app.quit": "leave the client",
    "app.stt.pushToTalk": "dictation, push to talk (S9)",
    "app.stt.toggle": "dictation, toggle (S9)",
}


@dataclass(frozen=True)
class Pressed:
    """What one key press runs: ``line`` for the session ("" when none), ``actions`` for the
    client, and whether ``line`` runs aliases of the session (so its ``client-only`` outcomes
    are actions the client runs too)."""

    line: str
    actions: tuple[str, ...]
    aliased: bool = False


@dataclass
class KeyBinds:
    binds: Binds
    warnings: list[str]

    def press(self, key: str) -> Pressed | None:
        """None when no bind has ``key``; an empty bind runs nothing (an empty Pressed)."""
        try:
            pressed = self.binds.press(key, Aliases())
        except ExpandError:
            body = self._body(key)
            plain = [c for c in body if c.verb != ACTION]
            return Pressed(format_list(plain), tuple(c.args[0] for c in body if c.verb == ACTION), aliased=True)
        if pressed is None:
            return None
        return Pressed(format_list(pressed.session), tuple(pressed.client))

    def _body(self, key: str) -> list[Command]:
        return next(body for bound, body in self.binds.order if bound == key)

    def keys_of(self, action: str) -> list[str]:
        """The keys whose winning bind runs ``action`` (for help texts)."""
        found: list[str] = []
        for key in self.binds.keys():
            body = self._body(key)
            if any(c.verb == ACTION and c.args[0] == action for c in body):
                found.append(key)
        return found


def load(agent_dir: Path) -> KeyBinds:
    """binds.cfg of ``agent_dir`` over the defaults, with its warnings."""
    loaded = binds_cfg.load(agent_dir, DEFAULTS)
    return KeyBinds(loaded.binds, list(loaded.warnings))
