"""The tools the agent offers, and a call run by name.

``run_call`` takes a call as the model made it (a tool's name and its arguments, as text or
already parsed): a name no offered tool has gets ``tool_unavailable`` naming the nearest
offered tools (inference.md S6 argument repair, rule 6); text arguments get the final parse
(rules 1-2: a call whose arguments do not parse never runs, ``invalid_arguments``); then the
tool runs through ``Tool.run`` (repair, schema check, body).

``context_for`` builds a session's context from its settings: the bash timeout is the cvar
toolBlockingBudgetMs as the config resolves it, so a project that is not trusted cannot raise
it (control.md S4b.5: the config layer withholds its guarded keys). Derived: the seed names
toolBlockingBudgetMs a limit and says no more of it; here it is the longest a tool call may
block the turn, so bash's default timeout and its ceiling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eukhe.agent.tools.base import DEFAULT_KILL_GRACE_MS, Tool, ToolContext, ToolResult
from eukhe.agent.tools.bash import BASH
from eukhe.agent.tools.files import EDIT, READ, WRITE
from eukhe.agent.tools.search import GLOB, GREP, LS
from eukhe.inference.repair import parse_tool_call_arguments, tool_unavailable
from eukhe.inference.wire.plan import Tool as WireTool
from eukhe.settings.agent import EukheSettings
from eukhe.settings.cvar import AgentLayers

TOOLS: tuple[Tool, ...] = (READ, WRITE, EDIT, LS, GLOB, GREP, BASH)
BUDGET_CVAR = "toolBlockingBudgetMs"


def wire_tools(tools: Sequence[Tool] = TOOLS) -> list[WireTool]:
    """The tools as a request offers them to any wire API."""
    return [tool.wire for tool in tools]


async def run_call(name: str, arguments: str | Mapping[str, Any], context: ToolContext, tools: Sequence[Tool] = TOOLS) -> ToolResult:
    """Run one call of the model; every failure is an error result."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        text = tool_unavailable(name, [t.name for t in tools])
        return ToolResult(text, True, "tool_unavailable")
    parsed = parse_tool_call_arguments(arguments) if isinstance(arguments, str) else arguments
    return await tool.run(parsed, context)


def context_for(workdir: Path, settings: EukheSettings, family: Sequence[AgentLayers] = (), cancel: asyncio.Event | None = None) -> ToolContext:
    """A session's tool context: its working directory and its settings' tool blocking budget."""
    budget = settings.cvars.value(family, BUDGET_CVAR)
    return ToolContext(Path(workdir), int(budget), DEFAULT_KILL_GRACE_MS, cancel or asyncio.Event())
