"""The transcript of the terminal UI: the session's turns as the agent streams them.

Each event of the agent's protocol becomes one block: the user's text (``turn_start``), the
reply as streamed markdown (``delta``), the model's thinking collapsed (``thinking``; inference.md
S10 shows thoughts and never logs them), each tool call collapsible with its result clipped to
``CLIP_LINES`` lines (``tool_call``, ``tool_result``), the Director stack's steps and rows
(control.md S5: goal status, reminders, forced calls, a progress pause), every other row of the
agent, and each retry on one line. Error rows (the seed's error rows: a refused request, a
failed turn) are marked as errors. The transcript keeps the plain text of what it shows
(``text``) so a reader of the screen and the tests see the same words.
"""

from __future__ import annotations

from typing import ClassVar

from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from eukhe.agent import protocol as p

CLIP_LINES = 12  # lines of a tool result shown; the rest is counted
CLIP_CHARS = 160  # characters of a tool call's arguments in its title


def clip(text: str, lines: int = CLIP_LINES) -> str:
    """``text`` cut to its first ``lines`` lines, with a line counting the rest."""
    split = text.splitlines()
    if len(split) <= lines:
        return text
    return "\n".join(split[:lines]) + f"\n... {len(split) - lines} more lines"


def one_line(text: str, width: int = CLIP_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


class Transcript(VerticalScroll):
    DEFAULT_CSS: ClassVar[str] = """
    Transcript { height: 1fr; }
    Transcript > .user { color: $text; background: $boost; padding: 0 1; margin-top: 1; }
    Transcript > .row { color: $text-muted; padding: 0 1; }
    Transcript > .error { color: $error; padding: 0 1; }
    Transcript > .retry { color: $warning; padding: 0 1; }
    Transcript > .director { color: $accent; padding: 0 1; }
    Transcript > Markdown { margin: 0 1; }
    Transcript > Collapsible { padding: 0; margin: 0 1; border: none; }
    Transcript > Collapsible > CollapsibleTitle { width: 100%; }
    """

    def __init__(self) -> None:
        super().__init__(id="transcript")
        self.lines: list[str] = []  # the plain text of each block, in order
        self._reply: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._reply_text = ""
        self._thinking: Static | None = None
        self._thinking_text = ""
        self._tools: dict[str, tuple[Collapsible, Static, str]] = {}
        self.show_thinking = False
        self.tools_expanded = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines + ([self._reply_text] if self._reply is not None else []))

    # -- blocks --------------------------------------------------------------------------------

    async def _add(self, widget: Widget, line: str) -> None:
        self.lines.append(line)
        await self.mount(widget)
        self.scroll_end(animate=False)

    async def close_reply(self) -> None:
        """End the reply and the thinking being streamed (a tool call or a row comes between)."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._reply is not None:
            self.lines.append(self._reply_text)
            self._reply = None
            self._reply_text = ""
        self._thinking = None
        self._thinking_text = ""

    async def user(self, text: str) -> None:
        await self.close_reply()
        await self._add(Static(f"> {text}", classes="user", markup=False), f"> {text}")

    async def row(self, text: str, kind: str = "row") -> None:
        """A row: kind ``row`` (muted), ``error``, ``retry`` or ``director``."""
        await self.close_reply()
        await self._add(Static(text, classes=kind, markup=False), text)

    async def error(self, text: str) -> None:
        await self.row(f"error: {text}", "error")

    async def delta(self, text: str) -> None:
        self._thinking = None
        if self._reply is None:
            self._reply = Markdown()
            await self.mount(self._reply)
            self._stream = Markdown.get_stream(self._reply)
        self._reply_text += text
        assert self._stream is not None
        await self._stream.write(text)
        self.scroll_end(animate=False)

    async def thinking(self, text: str) -> None:
        if self._thinking is None:
            await self.close_reply()
            self._thinking = Static("", markup=False)
            block = Collapsible(self._thinking, title="thinking", collapsed=not self.show_thinking, classes="thinking")
            self.lines.append("thinking")
            await self.mount(block)
        self._thinking_text += text
        self._thinking.update(self._thinking_text)

    async def tool_call(self, event: p.ToolCallEvent) -> None:
        await self.close_reply()
        title = f"{event.name} {one_line(event.arguments)}"
        body = Static("running...", markup=False)
        block = Collapsible(body, title=escape(title), collapsed=not self.tools_expanded, classes="tool")
        self._tools[event.id] = (block, body, title)
        await self._add(block, f"tool {title}")

    async def tool_result(self, event: p.ToolResultEvent) -> None:
        await self.close_reply()
        shown = clip(event.text)
        mark = "error" if event.is_error else "ok"
        found = self._tools.get(event.id)
        if found is None:  # a result whose call came before this client: a block of its own
            await self._add(Static(f"[{mark}] {shown}", markup=False), f"result {mark} {shown}")
            return
        block, body, title = found
        body.update(shown)
        block.title = escape(f"[{mark}] {title}")  # a title is markup: the brackets are text
        self.lines.append(f"result {mark} {shown}")

    async def clear(self) -> None:
        """Every block goes (the app switched to another session)."""
        await self.close_reply()
        await self.remove_children()
        self.lines.clear()
        self._tools.clear()

    def toggle_thinking(self) -> bool:
        self.show_thinking = not self.show_thinking
        for block in self.query(".thinking").results(Collapsible):
            block.collapsed = not self.show_thinking
        return self.show_thinking

    def toggle_tools(self) -> bool:
        self.tools_expanded = not self.tools_expanded
        for block in self.query(".tool").results(Collapsible):
            block.collapsed = not self.tools_expanded
        return self.tools_expanded

    # -- events of the agent ---------------------------------------------------------------------

    async def subagent(self, event: p.SubagentEvent) -> None:
        """A subagent's step as one row (its text streams to its own conversation; its report
        comes as a ``subagent`` row): its tool calls and its end."""
        inner = event.event
        if isinstance(inner, p.ToolCallEvent):
            await self.row(f"[{event.agent}] tool {inner.name} {one_line(inner.arguments)}")
        elif isinstance(inner, p.TurnEndEvent):
            await self.row(f"[{event.agent}] turn {inner.reason}" + (f": {one_line(inner.text)}" if inner.text else ""))

    async def event(self, event: p.Event) -> None:
        """One event of a turn, or a row of the agent."""
        if isinstance(event, p.TurnStartEvent):
            await self.user(event.text)
        elif isinstance(event, p.DeltaEvent):
            await self.delta(event.text)
        elif isinstance(event, p.ThinkingEvent):
            await self.thinking(event.text)
        elif isinstance(event, p.ToolCallEvent):
            await self.tool_call(event)
        elif isinstance(event, p.ToolResultEvent):
            await self.tool_result(event)
        elif isinstance(event, p.RowEvent):
            kind = {"settings_error": "error", "retry": "retry", "director": "director", "progress_pause": "director"}.get(event.kind, "row")
            await self.row(f"[{event.kind}] {event.text}", kind)
        elif isinstance(event, p.RetryEvent):
            await self.row(f"retry {event.attempt}/{event.retries}: {event.kind}, next try in {event.wait:g} s", "retry")
        elif isinstance(event, p.NoteEvent):
            await self.row(f"note {event.kind}: {event.used}/{event.max} used", "retry")
        elif isinstance(event, p.StepEvent):
            if not event.verdicts and event.decision == "yield":
                return  # no layer on the stack: the loop gave control back, nothing to show
            verdicts = ", ".join(event.verdicts) or "no layer"
            text = f"director: {event.decision} ({event.rule}; {verdicts})"
            if event.continuation:
                text += f": {one_line(event.continuation)}"
            await self.row(text, "director")
        elif isinstance(event, p.SubagentEvent):
            await self.subagent(event)
        elif isinstance(event, p.TurnEndEvent):
            await self.close_reply()
            if event.reason != "answered":
                await self.row(f"turn {event.reason}" + (f": {event.text}" if event.text else ""), "error" if event.reason != "aborted" else "row")
