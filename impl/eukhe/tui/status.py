"""The status line of the terminal UI: what the session runs on, in one line.

It shows the model, the thinking level as the agent shows it (inference.md S10 session 4: the
agent's ``thinking_level`` is the stored level clamped to the model, the default when unset; the
client computes no ladder), the service tier (the session's ``serviceTier`` switch, as the
agent sends it), ``mem N/128K`` when the agent gives the chat memory's use, the goal's status,
``autonomous`` when the session's ``autonomous.enabled`` switch is on or an autonomous layer is
on the Director stack, the stack's pushed layers, and whether a turn runs. The dictation phase (S9 dictation rule 5: ``[REC]`` while recording,
``[STT]`` while transcribing) leads the line when a take is under way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Phase = Literal["REC", "STT"]


@dataclass
class Status:
    model: str | None = None  # provider/id, None when the session has no model
    thinking: str | None = None
    offered: list[str] | None = None
    tier: str | None = None  # the session's serviceTier; None: not known (an agent that sends no switches)
    autonomous: bool = False  # the session's autonomous.enabled
    mem_used: int | None = None  # bytes of the chat memory's view, when the agent is the chat's (a memory event)
    mem_limit: int = 128_000
    goal: dict[str, Any] | None = None
    stack: list[str] = field(default_factory=list)  # kinds of the Director layers, bottom first
    running: bool = False
    connected: bool = False
    dictation: Phase | None = None


def tokens(count: int) -> str:
    """``128K`` for 128000, ``1.5M`` for 1500000, the number itself under 1000: three significant
    digits, in the next unit once they round to 1000 (999,999 is ``1M``, never ``1e+03K``)."""
    if count < 1000:
        return str(count)
    for scale, unit in ((1000, "K"), (1_000_000, "M")):
        shown = f"{count / scale:.3g}"
        if "e" not in shown:  # under 1000 once rounded (.3g writes 1000 and more as 1e+03)
            return shown + unit
    return f"{count / 1_000_000_000:.3g}G"


def line(status: Status) -> str:
    parts: list[str] = []
    if status.dictation is not None:
        parts.append(f"[{status.dictation}]")
    if not status.connected:
        parts.append("not connected")
    parts.append(f"model {status.model}" if status.model else "no model: /model")
    if status.thinking is not None:
        parts.append(f"thinking {status.thinking}")
    if status.tier is not None:
        parts.append(f"tier {status.tier}")
    if status.mem_used is not None:
        parts.append(f"mem {tokens(status.mem_used)}/{tokens(status.mem_limit)}")
    if status.goal is not None:
        parts.append(f"goal {status.goal.get('status', '?')}")
    pushed = [kind for kind in status.stack if kind not in ("goal", "autonomous")]
    if status.autonomous or "autonomous" in status.stack:
        parts.append("autonomous")
    if pushed:
        parts.append("directors " + ",".join(pushed))
    if status.running:
        parts.append("running")
    return " | ".join(parts)
