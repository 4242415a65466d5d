"""Deliberate breaks of what a client sends while a turn runs (a second turn, an abort) and of the
bash tool's budget and clipped output: each must be caught by the loop bridge
(``EUKHE_BREAK=<name> pytest tests/bridge/test_bridge.py -k "agent and byte"``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "agent_abort_does_not_cancel",
        "agent",
        "eukhe.agent.loop",
        "            self._task.cancel()\n",
        "            pass\n",
        "production: abort while a request runs lets the run go on to its end instead of ending it aborted",
    ),
    Break(
        "agent_second_turn_refused_idle",
        "agent",
        "eukhe.agent.daemon",
        '            raise _Refused("busy", "a turn runs: send steer to join it, or follow_up to run after it")\n',
        '            raise _Refused("idle", "a turn runs: send steer to join it, or follow_up to run after it")\n',
        "production: a turn sent while one runs is refused idle instead of busy",
    ),
    Break(
        "agent_bash_timeout_past_the_budget",
        "agent",
        "eukhe.agent.tools.bash",
        "timeout_ms = context.bash_timeout_ms if asked is None else min(int(asked), context.bash_timeout_ms)",
        "timeout_ms = context.bash_timeout_ms if asked is None else int(asked)",
        "production: a bash call's timeout_ms past toolBlockingBudgetMs is taken as asked (S4b.5: the budget holds)",
    ),
    Break(
        "agent_bash_tail_of_the_last_chunk",
        "agent",
        "eukhe.agent.tools.bash",
        "            self.tail = (self.tail + text)[-self.keep :]\n",
        "            self.tail = text[-self.keep :]\n",
        "production: a long bash output keeps as its tail only the last chunk read, not its last characters",
    ),
    Break(
        "agent_bash_result_past_the_cap",
        "agent",
        "eukhe.agent.tools.bash",
        "    text = output.text(CAP - len(status) - 1)\n",
        "    text = output.text(CAP - len(status))\n",
        "production: a clipped bash result with its status line is one character past memory.md rule 9's cap",
    ),
]
BREAKS.extend(
    [
        Break(
            "agent_title_renames_a_named_session",
            "agent",
            "eukhe.agent.runner",
            "self.main.parent is not None or self.main.document(TITLE_DOC) is not None:",
            "self.main.parent is not None:",
            "production: a session its user named is titled all the same (S9: user names kept)",
        ),
        Break(
            "agent_title_keeps_a_capital_label",
            "agent",
            "eukhe.tiny.uses",
            '    if line.lower().startswith("title:"):\n',
            '    if line.startswith("title:"):\n',
            "production: a title reply written 'Title: ...' keeps its label in the title",
        ),
    ]
)
BREAKS.append(
    Break(
        "agent_full_provider_sends_anyway",
        "agent",
        "eukhe.agent.inflight",
        "            await asyncio.shield(waiting)\n",
        "            pass\n",
        "production: a request of a provider whose providerMaxInFlight slots are all held is sent without waiting for one (S4b.4)",
    )
)
# The tools' fault paths (the bridge's EXTRA_POOL): each call's outcome is the transcript's.
BREAKS.extend(
    [
        Break(
            "agent_lone_surrogate_sent_raw",
            "agent",
            "eukhe.agent.loop",
            "        return json.dumps(value)\n",
            "        return text\n",
            "production: a call whose arguments hold a lone surrogate is sent again as raw text UTF-8 cannot carry (the next request fails)",
        ),
        Break(
            "agent_os_error_told_as_invalid_arguments",
            "agent",
            "eukhe.agent.tools.base",
            "            result = ToolResult.error(IO_ERROR, ",
            "            result = ToolResult.error(INVALID_ARGUMENTS, ",
            "production: an OS error of a tool (a name past the system's limit) is told as invalid_arguments, not io_error",
        ),
        Break(
            "agent_edit_unique_refused",
            "agent",
            "eukhe.agent.tools.files",
            "    if places > 1:\n",
            "    if places > 0:\n",
            "production: an edit whose old text occurs once is refused old_not_unique (an off by one)",
        ),
        Break(
            "agent_write_needs_an_existing_file",
            "agent",
            "eukhe.agent.tools.files",
            "    except FileNotFoundError:\n        mode = None\n",
            '    except FileNotFoundError:\n        raise ToolError(NOT_FOUND, f"{real} does not exist") from None\n',
            "production: write refuses a file that does not exist yet instead of making it",
        ),
        Break(
            "agent_grep_refuses_links_outside",
            "agent",
            "eukhe.agent.tools.search",
            "    except ToolError:\n        return None\n",
            "    except ToolError:\n        raise\n",
            "production: grep over a tree holding a link that leads outside fails outside_workdir instead of skipping the link",
        ),
    ]
)
BREAKS.append(
    Break(
        "agent_spent_leak_answer_not_kept",
        "agent",
        "eukhe.agent.loop",
        "                    if text:\n",
        "                    if False:\n",
        "production: with every note spent, leaked markup answers the run but is not kept in the conversation (the next request lacks it)",
    )
)
BREAKS.append(
    Break(
        "agent_edit_of_nul_bytes",
        "agent",
        "eukhe.agent.tools.files",
        '    if b"\\x00" in data:\n',
        "    if False:\n",
        "production: edit decodes a file holding a NUL byte as text and changes it (binary_file refused it)",
    )
)
