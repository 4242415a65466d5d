"""A rendered view plus a conversation as the wire request (memory.md rules 26, 29, 31, 32, 44,
51, D6, D11).

- Input order ``[tools] [system] [view] [new message]`` (rule 26): the tools and the system
  prompt are the chat's ``Layers``, built once and shared by turns and compactions (rules 27,
  32, 44); the view opens the first user message, and the conversation's leading user texts
  (per-turn state, the ``Turn:``-marked message, a compaction task, a subagent's task) join it
  behind the view, each after a blank line (rule 51, D11).
- Cache marks (rule 29): the view goes in blocks of ``BLOCK`` lines; the piece ending at the
  last whole block carries a mark, and the request's last message carries one. The wire
  clients send marks where the API and the rulebook allow them (Anthropic; anthropic/ models
  on OpenRouter) and nowhere else. Marks are ``{"type": "ephemeral"}``: no 1-hour entries, and
  nothing here pings to keep an entry warm (rule 31).
- The model (D6): memory.model, else the auxiliary model, with memory.thinking; with neither,
  ``MemoryModelUnset`` names the saved default and the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from eukhe.inference.wire.plan import Message, Request, Tool
from eukhe.memory import BLOCK
from eukhe.memory.chat import Chat
from eukhe.memory.prompts import TOOLS, compress_task, merge_task, system_prompt
from eukhe.memory.text import flatten
from eukhe.memory.view import Node, first, last, name, render_lines


@dataclass(frozen=True)
class Layers:
    """What every call of one chat sends before the view: tools and system prompt (rule 27)."""

    system: str
    tools: tuple[Tool, ...]

    @classmethod
    def of(cls, tool_notes: str = "", user_instructions: str = "", tools: Sequence[Tool] = (), *, devices: bool = False) -> Layers:
        """The memory tools (zoom, date) then the session's own ``tools``; the one system
        prompt with the static tool notes and the user's instructions after it (D4)."""
        return cls(system_prompt(tool_notes, user_instructions, devices=devices), TOOLS + tuple(tools))


def view_parts(lines: Sequence[str], block: int = BLOCK) -> tuple[tuple[str, bool], ...]:
    """The rendered view (``<chat>``, the ``id+n|text`` lines, ``</chat>``) as text blocks of
    ``block`` lines each, ``<chat>`` opening the first; the last whole block carries the cache
    mark; the rest of the lines and ``</chat>`` close it, unmarked (rule 29). Each block is its
    own piece so that a later call, whose view grew at its end, finds the entry an earlier call
    wrote a few blocks back."""
    whole = len(lines) // block * block
    parts: list[tuple[str, bool]] = []
    for start in range(0, whole, block):
        text = "".join(line + "\n" for line in lines[start : start + block])
        parts.append((("<chat>\n" if start == 0 else "") + text, start + block == whole))
    rest = "".join(line + "\n" for line in lines[whole:]) + "</chat>"
    if not parts:
        return (("<chat>\n", False), (rest, False))
    return tuple(parts) + ((rest, False),)


def request_messages(view_lines: Sequence[str], conversation: Sequence[Message]) -> tuple[Message, ...]:
    """The view, then the conversation (rule 26): its leading user texts join the view's user
    message, each after a blank line; the rest follow as they are; the last message carries
    the request-end cache mark (rule 29)."""
    parts = list(view_parts(view_lines))
    lead = 0
    while lead < len(conversation) and conversation[lead].role == "user" and not conversation[lead].parts:
        text, mark = parts[-1]
        parts[-1] = (text + "\n\n" + conversation[lead].text, mark)
        lead += 1
    messages = (Message("user", parts=tuple(parts)),) + tuple(conversation[lead:])
    return messages[:-1] + (replace(messages[-1], cache=True),)


def build_request(layers: Layers, view_lines: Sequence[str], conversation: Sequence[Message], thinking: str | None = None) -> Request:
    """One call's request: the chat's layers, the view and the conversation (rules 26, 29)."""
    return Request(request_messages(view_lines, conversation), system=layers.system, tools=layers.tools, thinking=thinking)


# -- the model (D6) ----------------------------------------------------------------------------


class MemoryModelUnset(Exception):
    """The compactor has no model: memory.model is unset and so is the auxiliary model. The
    message names the saved default and why it does not serve (inference.md S6 item 4)."""

    def __init__(self, saved_default: str | None, reason: str) -> None:
        saved = saved_default or "(none)"
        super().__init__(
            f"MemoryModelUnset: the memory compactor has no model: memory.model is unset and there is no "
            f"auxiliary model; saved default {saved}: {reason}; set memory.model (/memory model)"
        )
        self.saved_default = saved_default
        self.reason = reason


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    id: str
    thinking: str  # memory.thinking: a level of the ladder
    source: str  # "memory.model" or "auxiliary"


def split_model(value: str) -> tuple[str, str]:
    """``provider/id`` (the id may hold further slashes: ``openrouter/anthropic/claude``)."""
    provider, slash, ident = value.strip().partition("/")
    if not slash or not provider or not ident:
        raise ValueError(f"a model is written provider/id, not {value!r}")
    return provider, ident


def choose_model(memory_model: str, thinking: str, auxiliary: str | None, saved_default: str | None, reason: str) -> ModelChoice:
    """memory.model when set, else the auxiliary model (D6), with memory.thinking; with neither,
    ``MemoryModelUnset`` with the saved default and the ``reason`` it does not serve."""
    if memory_model.strip():
        return ModelChoice(*split_model(memory_model), thinking, "memory.model")
    if auxiliary is not None and auxiliary.strip():
        return ModelChoice(*split_model(auxiliary), thinking, "auxiliary")
    raise MemoryModelUnset(saved_default, reason)


# -- a compaction's input (rules 32, 34, 35, 41) -----------------------------------------------


def compaction_input(chat: Chat, node: Node, kind_of: Callable[[int], str]) -> tuple[list[str], str]:
    """What the compaction of ``node`` sends after the chat's layers: its compaction view (built
    lines only, ending at the node, up to the first unbuilt line: rules 34, 41) and its task
    (rule 35): a message's kind and whole text, or a merge's two lines."""
    lines = render_lines(chat.context(node), chat.text)
    level, i = node
    if level == 0:
        return lines, compress_task(i, kind_of(i), chat.message_text(i))
    left, right = (level - 1, 2 * i), (level - 1, 2 * i + 1)
    texts = chat.text(left), chat.text(right)
    assert texts[0] is not None and texts[1] is not None, f"both halves of {name(node)} are built"
    return lines, merge_task(name(left), name(right), first(node), last(node), flatten(texts[0]), flatten(texts[1]))
