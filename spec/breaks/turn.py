"""Deliberate breaks of the turn (memory.md rules 8, 46-58, D10; issue 12): each must be caught
by ``pytest tests -k turn`` (the law turn_starts_from_the_view and the tests under tests/turn)."""

from spec.breaks import Break

AREA = "turn"

BREAKS = [
    Break(
        "turn_view_after_the_message",
        AREA,
        "eukhe.memory.turn",
        "                lines, cuts = _render(chat)\n                ids: list[int] = []\n",
        "                ids: list[int] = []\n                if message is not None:\n                    ids = [durable.message(piece, kind) for piece in split_text(message)]\n                    message = None\n                lines, cuts = _render(chat)\n",
        "rule 49 lost: the view is rendered after the new message is logged and shows it",
    ),
    Break(
        "turn_placeholder_at_the_deadline",
        AREA,
        "eukhe.memory.turn",
        "return line if line is not None else cut(chat.source(node), NODE)",
        'return line if line is not None else "(not summarized yet: zoom it)"',
        "D10 lost: at the deadline a line not summarized shows the placeholder, not its input cut",
    ),
    Break(
        "turn_view_not_pinned",
        AREA,
        "eukhe.memory.turn",
        "request = build_request(self.layers, outcome.pinned.lines, messages, self.thinking)",
        "request = build_request(self.layers, _render(_core(self.memory).chat.chat)[0], messages, self.thinking)",
        "rule 49 lost: every call of a run renders the view again, with the run's own lines in it",
    ),
    Break(
        "turn_logs_thoughts",
        AREA,
        "eukhe.memory.turn",
        """                        thoughts.text(event)
                        show("thinking", event.text)""",
        """                        thoughts.text(event)
                        show("thinking", event.text)
                        text.append(event.text)""",
        "rule 8 lost: thoughts go into the reply and are logged",
    ),
    Break(
        "turn_messages_never_join",
        AREA,
        "eukhe.memory.turn",
        "joined = self._take(not calls) if inbox else []",
        "joined = []",
        "rule 46 lost: a message sent during a call waits for the turn's end instead of joining between tool calls",
    ),
    Break(
        "turn_subagent_logs_its_steps",
        AREA,
        "eukhe.memory.turn",
        "await self._converse(messages, log, show, outcome, inbox=False, model=model)",
        "await self._converse(messages, self._chat_log, show, outcome, inbox=False, model=model)",
        "rule 57 lost: a subagent's steps are logged in the chat, not in its own log",
    ),
    Break(
        "turn_agent_log_split_on_unicode_breaks",
        AREA,
        "eukhe.memory.turn",
        'for line in data.split("\\n"):',
        "for line in data.splitlines():",
        "the defect the law found: an agent's log line holding U+2028 or U+0085 was split and did not parse",
    ),
    Break(
        "turn_chat_view_dropped",
        AREA,
        "eukhe.agent.chat",
        "        return request_messages(self.pinned.lines, self.lead + own)",
        "        return request_messages((), self.lead + own)",
        "the chat's requests drop the pinned view: the agent answers a chat turn from its message alone (memory.md rules 47, 49)",
    ),
]
