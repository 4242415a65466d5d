"""Helpers of the turn tests: turns against the loopback server, what a recorded request sent,
and the compactor played by the test (the nodes a call would build, built by hand)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from eukhe.inference.wire import client_for
from eukhe.inference.wire.plan import WireModel
from eukhe.memory.owner import Memory
from eukhe.memory.records import Kind
from eukhe.memory.turn import Turns
from spec.loopback import LoopbackServer, Recorded, Stream, base_url

APIS = ("openai-completions", "anthropic-messages")
T = TypeVar("T")


def model_for(server: LoopbackServer, api: str) -> WireModel:
    return WireModel("loop", "loop-model", api, base_url(server, api), "key-loop", max_tokens=1024)


def turns_for(memory: Memory, server: LoopbackServer, api: str, **options: Any) -> Turns:
    return Turns(memory, client_for(model_for(server, api), timeout=30.0), **options)


def run(coroutine: Awaitable[T]) -> T:
    async def main() -> T:
        return await coroutine

    return asyncio.run(main())


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        if block.get("type") == "text":
            out.append(block["text"])
        elif block.get("type") == "tool_result":
            out.extend(_texts(block.get("content")))
    return out


def turns_of(recorded: Recorded) -> list[tuple[str, str]]:
    """A request's messages as (role, text): text blocks joined, tool calls as ``call NAME ARGS``,
    tool results as role ``tool`` (both APIs read alike)."""
    out: list[tuple[str, str]] = []
    for message in recorded.body["messages"]:
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            continue
        if role == "tool":
            out.append(("tool", "".join(_texts(content))))
            continue
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            for block in content:
                if block.get("type") == "tool_result":
                    out.append(("tool", "".join(_texts(block.get("content")))))
                elif block.get("type") == "text":
                    out.append((role, block["text"]))
            continue
        text = "".join(_texts(content))
        if text:
            out.append((role, text))
        for call in message.get("tool_calls") or []:
            out.append(("call", f"{call['function']['name']} {call['function']['arguments']}"))
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use":
                    out.append(("call", f"{block['name']} {json.dumps(block['input'])}"))
    return out


def leading(recorded: Recorded) -> str:
    """The leading user text of a request (the view, the state, the first message)."""
    out = []
    for role, text in turns_of(recorded):
        if role != "user":
            break
        out.append(text)
    return "".join(out)


def view_of(recorded: Recorded) -> str:
    """The ``<chat> ... </chat>`` a request carries."""
    text = leading(recorded)
    found = re.search(r"<chat>\n.*?</chat>", text, re.S)
    assert found is not None, text[:300]
    return found.group(0)


def logged(directory: Path) -> list[tuple[str, str]]:
    """The chat's message lines on disk: (kind, text), in id order."""
    rows = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            if not line:
                continue
            record = json.loads(line)
            if "i" in record:
                rows.append((record["i"], record["kind"], record["text"]))
    return [(kind, text) for _i, kind, text in sorted(rows)]


def long_text(tag: str, length: int = 900) -> str:
    return (f"{tag} " + "lorem ipsum dolor sit amet " * (length // 27 + 1))[:length]


def user(memory: Memory, text: str) -> list[int]:
    return memory.append(text, Kind.USER)


# -- the live compactor against the same server --------------------------------------------------------


def is_compaction(recorded: Recorded) -> bool:
    """A compaction's request: its last user text is a task opened by "Compaction:"."""
    return "\n\nCompaction:" in leading(recorded)


class Router:
    """The server's answers by what a request is: compactions get ``compaction(request)``, turns
    their scripted replies in order."""

    def __init__(self, server: LoopbackServer, compaction: Callable[[Recorded], Stream], turns: list[Stream] | None = None) -> None:
        self.compaction = compaction
        self.turns = list(turns or [])
        self.compactions: list[Recorded] = []
        server.responder = self

    def __call__(self, recorded: Recorded) -> Stream | None:
        if is_compaction(recorded):
            self.compactions.append(recorded)
            return self.compaction(recorded)
        return self.turns.pop(0) if self.turns else None


def compactor_for(memory: Memory, server: LoopbackServer, api: str) -> Any:
    """The chat's live compactor (eukhe.memory.compactor) on the owner's chat, its model on the
    loopback server, sharing the turns' layers (rule 32)."""
    import time

    from eukhe.memory.compactor import Compactor
    from eukhe.memory.request import Layers
    from eukhe.memory.turn import LockedChat

    return Compactor(LockedChat(memory), client_for(model_for(server, api), timeout=30.0), Layers.of(), clock=time.monotonic)


def environ(agent: Path) -> dict[str, str]:
    """The environment of an `eukhe` process on ``agent``: no EUKHE_ variable or API key of the
    machine's, HOME beside the agent dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_") and not k.endswith("_API_KEY")}
    env.update({"EUKHE_AGENT_DIR": str(agent), "HOME": str(agent.parent), "TERM": "xterm"})
    return env


def chat_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "eukhe", "chat", *argv]

