"""The forced tool call (inference.md S6.3): generation::force.

A forced call is a tool and a retry count. Every request ends with a soft prompt naming the
tool; native forced choice is flagged by the compiled steps ``bend.infer.flag`` and
``bend.infer.after`` (they run as the compiled model, bend/ffi_infer_force: no copy here): the
first request only if supported and free (no prompt-cache invalidation), retries if supported.
Support is the wire API's predicate ``maps_forced_tool_choice``: Anthropic Messages and Claude
on Bedrock reject forced choice with manual extended thinking, so it is unsupported there and
never escalated to a flag that would not be sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bend import infer as compiled

MANUAL_THINKING_REJECTS: frozenset[str] = frozenset({"anthropic-messages", "bedrock-converse-stream"})
FORCED_CHOICE_APIS: frozenset[str] = frozenset(
    {
        "anthropic-messages",
        "bedrock-converse-stream",
        "openai-completions",
        "openai-responses",
        "openai-codex-responses",
        "azure-openai-responses",
        "google-generative-ai",
        "google-vertex",
        "mistral-conversations",
    }
)


class ForcedToolError(Exception):
    """ForcedToolError::NotCalled: the model never called the forced tool."""

    def __init__(self, tool: str, attempts: int) -> None:
        super().__init__(f"ForcedToolError::NotCalled({tool}): not called in {attempts} attempt{'s' if attempts != 1 else ''}")
        self.tool = tool
        self.attempts = attempts


def maps_forced_tool_choice(api: str, manual_thinking: bool) -> bool:
    """Whether a request of this wire API can carry native forced choice."""
    if manual_thinking and api in MANUAL_THINKING_REJECTS:
        return False
    return api in FORCED_CHOICE_APIS


def soft_prompt(tool: str) -> str:
    return f"Call the tool `{tool}` now; answer only through it."


@dataclass(frozen=True)
class ForcedRequest:
    attempt: int
    forced_choice: bool  # native tool_choice set to the tool
    soft_prompt: str


@dataclass(frozen=True)
class ForceResult:
    requests: tuple[ForcedRequest, ...]


def run(tool: str, retries: int, supported: bool, free: bool, send: Callable[[ForcedRequest], bool]) -> ForceResult:
    """Send requests until the model calls ``tool`` (``send`` answers whether the reply did);
    ForcedToolError::NotCalled when the retries run out."""
    if retries < 0:
        raise ValueError("retries is a natural")
    requests: list[ForcedRequest] = []
    attempt = 0
    while True:
        request = ForcedRequest(attempt, compiled.flag(attempt, supported, free), soft_prompt(tool))
        requests.append(request)
        step = compiled.after(attempt, retries, send(request))
        if step == compiled.CALLED:
            return ForceResult(tuple(requests))
        if step == compiled.NOT_CALLED:
            raise ForcedToolError(tool, len(requests))
        attempt += 1
