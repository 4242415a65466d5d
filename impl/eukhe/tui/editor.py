"""The draft editor of the terminal UI: a multi-line text area and its slash-command hints.

The editor has no keys of its own beyond typing and moving: sending, a new line, completing a
command and clearing are binds (control.md S4.5, ``eukhe.tui.keys``), which the app runs. While
the draft is one word that starts with ``/`` the hint line under it lists the commands it can
still become (``eukhe.tui.commands.complete``); ``complete_draft`` completes it.
"""

from __future__ import annotations

import os
from typing import ClassVar

from textual.widgets import Static, TextArea

from eukhe.tui import commands


class Draft(TextArea):
    DEFAULT_CSS: ClassVar[str] = """
    Draft { height: auto; min-height: 3; max-height: 12; border: round $primary; }
    """

    def __init__(self) -> None:
        super().__init__("", id="draft", tab_behavior="focus")  # soft wrap, no line numbers: TextArea's defaults

    def newline(self) -> None:
        self.insert("\n")

    def complete_draft(self) -> list[str]:
        """Complete a typed command word: the one match (and a space), or the matches' common
        prefix; the matches."""
        matches = commands.complete(self.text)
        if len(matches) == 1:
            self.load_text(matches[0] + " ")
        elif matches:
            self.load_text(os.path.commonprefix(matches))
        self.move_cursor(self.document.end)
        return matches


class Hints(Static):
    DEFAULT_CSS: ClassVar[str] = """
    Hints { height: auto; color: $text-muted; padding: 0 1; }
    """

    def show_for(self, draft: str) -> None:
        matches = commands.complete(draft)
        if not matches:
            self.update("")
            self.display = False
            return
        self.display = True
        if len(matches) == 1:
            self.update(commands.COMMANDS[matches[0]])
        else:
            self.update("  ".join(matches))
