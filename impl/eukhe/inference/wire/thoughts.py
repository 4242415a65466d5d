"""A reply's reasoning blocks, assembled from its stream: the thinking a provider wants sent back
with the reply in a tool loop (Anthropic's signed and redacted thinking, the Responses reasoning
items, Gemini's signatures; ``plan.Thought``). The chat's turns keep them in the conversation
only (memory.md rule 8: thoughts are never logged); the agent's turns keep them in the session.
"""

from __future__ import annotations

from eukhe.inference.wire.events import ThinkingDelta, ThinkingSignature
from eukhe.inference.wire.plan import Thought


class Thoughts:
    """A reply's reasoning blocks as the stream gives them: thinking text and signatures by
    block, in order of first appearance."""

    def __init__(self) -> None:
        self.texts: dict[int, list[str]] = {}
        self.signed: dict[int, ThinkingSignature] = {}
        self.order: list[int] = []

    def _see(self, block: int) -> None:
        if block not in self.order:
            self.order.append(block)

    def text(self, delta: ThinkingDelta) -> None:
        self._see(delta.block)
        self.texts.setdefault(delta.block, []).append(delta.text)

    def sign(self, signature: ThinkingSignature) -> None:
        self._see(signature.block)
        self.signed[signature.block] = signature

    def done(self) -> tuple[Thought, ...]:
        """The signed blocks (a block without a signature cannot be sent back)."""
        out = []
        for block in self.order:
            signed = self.signed.get(block)
            if signed is not None:
                out.append(Thought("".join(self.texts.get(block, [])), signed.signature, signed.redacted, signed.item))
        return tuple(out)
