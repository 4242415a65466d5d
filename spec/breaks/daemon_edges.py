"""Named deliberate breaks of the agent process's edges the daemon bridge reaches from its scenarios
after the first 300: an agent dir whose agents is a file (cvar_save fails with the OS's error), a
Director stack document that does not parse (a push fails DocumentError), a takeover's claim that
cannot bind its socket, a line of the stdin of ``eukhe agent serve`` past the protocol's limit, a
/memory model line of too many words in the chat, a saved default whose provider has no
credentials, and a connection that does not read (its unsent events past the agent's limit); then
a turn loop's event from a thread of its own, a client serve with its stdin closed, a connection
that does not read as the agent ends, and a turn cancelled as it ends. Each must be caught by the
daemon bridge."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_os_error_told_internal",
        "daemon",
        "eukhe.agent.daemon",
        "    if isinstance(error, OSError):",
        "    if False:",
        "a request the OS refuses (cvar_save where agents is a file) is told as a bug of eukhe, not as the OS's error",
    ),
    Break(
        "daemon_stack_document_error_internal",
        "daemon",
        "eukhe.agent.daemon",
        "    if isinstance(error, DirectorsDocumentError):",
        "    if False:",
        "a push on a Director stack document that does not parse is told as a bug of eukhe, not as the document's error",
    ),
    Break(
        "daemon_failed_claim_keeps_session",
        "daemon",
        "eukhe.agent.daemon",
        "        except BaseException:\n            session.close()\n            raise\n        return daemon",
        "        except BaseException:\n            raise\n        return daemon",
        "a claim that cannot bind its socket keeps the session's writer lock: no agent serves it, none can take it",
    ),
    Break(
        "daemon_relay_long_line_not_too_long",
        "daemon",
        "eukhe.agent.daemon",
        '            self.output.write(p.encode(p.ErrorEvent(kind=p.TOO_LONG, message=f"a line longer than {p.LINE_LIMIT} bytes was dropped")))',
        '            self.output.write(p.encode(p.ErrorEvent(kind=p.NOT_JSON, message=f"a line longer than {p.LINE_LIMIT} bytes was dropped")))',
        "a line of the terminal past the protocol's limit is answered as a line that is not JSON, not as one too long",
    ),
    Break(
        "daemon_memory_model_extra_words_taken",
        "daemon",
        "eukhe.agent.chat",
        "        if len(words) > 2:",
        "        if False:",
        "/memory model PROVIDER/ID LEVEL with words after the level saves the role, the rest ignored, instead of refusing the line",
    ),
    Break(
        "daemon_keyless_default_taken",
        "daemon",
        "eukhe.agent.daemon",
        "        except NoModel:  # no credentials (or an auth.json that cannot be read)\n            pass",
        "        except NoModel:  # no credentials (or an auth.json that cannot be read)\n            keyed.append(saved[0])",
        "a saved default whose provider has no credentials is taken as the session's model (S6: never a provider without credentials)",
    ),
    Break(
        "daemon_client_that_does_not_read_kept",
        "daemon",
        "eukhe.agent.daemon",
        "        if self.pending > self.limit:  # it does not read: dropped; it gets state again when back",
        "        if False:",
        "a client whose unsent events pass the agent's limit (one that does not read) is kept, its events piling up without bound",
    ),
    Break(
        "daemon_thread_emit_dropped",
        "agent",
        "eukhe.agent.daemon",
        "                self.loop.call_soon_threadsafe(self.emit, event)",
        "                pass",
        "an event a turn loop emits from a thread of its own never reaches a client",
    ),
    Break(
        "daemon_closed_stdin_never_ends",
        "agent",
        "eukhe.agent.daemon",
        "        lines.put_nowait(END_OF_INPUT)",
        "        pass",
        "`eukhe agent serve` started with its stdin closed waits for input for ever instead of ending as a client whose input ended",
    ),
    Break(
        "daemon_end_keeps_a_stalled_connection",
        "agent",
        "eukhe.agent.daemon",
        "            if not client.task.done():\n                client.drop()",
        "            if not client.task.done():\n                pass",
        "the agent's end leaves a connection that does not read open, so it is sent the rest of what was queued for it",
    ),
    Break(
        "daemon_cancelled_turn_answered",
        "agent",
        "eukhe.agent.daemon",
        '            failure = "the turn was cancelled"',
        "            failure = None",
        "a turn cancelled as the agent ends is told to its clients as answered",
    ),
]
