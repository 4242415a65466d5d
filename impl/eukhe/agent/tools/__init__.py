"""The agent's real tools (issue 28, item 3): read, write, edit, ls, glob, grep and bash in the
session's working directory.

- ``base``: ``Tool`` (name, description, JSON schema, and ``run``: repair, check, body),
  ``ToolContext``, ``ToolResult``, ``ToolError`` and its kinds, the path policy, clipping.
- ``schema``: the JSON Schema subset the tools declare, and the check of arguments against it.
- ``files``: read, write (atomic), edit (exact replace).
- ``search``: ls, glob, grep.
- ``bash``: a command in its own process group, killed whole on timeout or cancellation.
- ``registry``: the tools offered, ``run_call`` by name, ``context_for`` a session's settings.
"""

from eukhe.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from eukhe.agent.tools.registry import TOOLS, context_for, run_call, wire_tools

__all__ = ["TOOLS", "Tool", "ToolContext", "ToolError", "ToolResult", "context_for", "run_call", "wire_tools"]
