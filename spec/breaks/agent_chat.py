"""Named deliberate breaks of the chat's turn loop (memory.md rules 26, 47, 48, 57; D11): a session
that is the chat answers from its view. Each must be caught by the loop bridge's chat scenarios."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_chat_no_date",
        "agent",
        "eukhe.agent.chat",
        '        self.lead = (Message("user", f"Now: {now}"), Message("user", turn_text(text)))',
        '        self.lead = (Message("user", turn_text(text)),)',
        "a chat's run sends the view and the message without the date line between them",
    ),
    Break(
        "agent_chat_child_without_view",
        "agent",
        "eukhe.agent.runner",
        '            spawn["view"] = self.chat.memory.view()',
        "            pass",
        "a subagent of the chat starts from its task alone, not from the chat's view (rule 57)",
    ),
    Break(
        "agent_chat_report_not_logged",
        "agent",
        "eukhe.agent.runner",
        "                self.chat.log([entry])",
        "                pass",
        "a background report that comes with no turn running is not logged to the chat: the next view lacks it",
    ),
    Break(
        "agent_chat_results_not_logged",
        "agent",
        "eukhe.agent.chat",
        '        return entry_lines({"type": "tool_result", "text": str(content.get("text", ""))})',
        "        return []",
        "a tool's result is not logged to the chat (rule 48): a later view lacks it",
    ),
]
