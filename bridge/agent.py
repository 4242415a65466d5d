"""The loop bridge (issue 28 item 6): the running agent's turn loop (impl/eukhe/agent/loop.py)
against the compact model of the loop (bend/agent.py), on 300 generated scenarios, transcript
against transcript, byte for byte.

The production side is the running agent on loopback: the agent process (``eukhe.agent.daemon.Daemon``
with the session runner, ``eukhe.agent.runner``) of a session in a temporary agent dir (every
commit fsynced) pinned to a model whose models.json provider speaks openai-completions to
``spec.loopback.LoopbackServer``, which plays each scenario's replies. Each step is a request
as a client sends it (the settings as one ``cvar`` line, ``/remind``, ``/force TOOL --tries N``,
the user's ``turn``, and ``steer`` and ``follow_up`` while a reply's request runs: its stream
waits at a gate until they are sent); the goal and the autonomous layer, which no request sets, are set on the
session the agent holds. The runner does the rest as for any turn: the model resolved from the
session, the wire client with its retries (the 429s say retry-after 0) within the provider's
providerMaxInFlight (2 here, so every request takes a slot), the real tools in the project
directory holding a few files, the Directors on the session's documents. Its transcript is what
the agent's clients are sent (the protocol events: notes, retries, tool calls and results, the
steps and rows of the Directors, the end of each run), with one line per HTTP request the server
received, read from the request's JSON body: the forced tool (native ``tool_choice``, else the
soft prompt alone), the note the request ends with and the conversation it sends, one token a
message (``message_tokens``: a dropped result, a reply sent twice or split, a note kept in the
conversation all show).

While a request runs, a scenario may also send a second ``turn`` (refused busy) or ``abort`` (the
run ends aborted before the request's reply is played). A bash call of the first request may
write past the output cap (its result is told as its length, its first and last output lines and
its status line), leave a job running, write bytes that are not UTF-8, or ask a timeout past the
session's toolBlockingBudgetMs; it also makes two of the tools' fault paths (EXTRA_POOL: an argument
UTF-8 cannot carry, a name past the system's limit, an edit that applies, a write of a new file,
grep over links that lead outside or nowhere). A max_notes scenario may spend every note of its
first run, then leak markup that does not rebuild: the markup is the answer, kept for the next
run's request (S5.4). Titles (inference.md S9): a scenario whose setup names ``titles``
turns titles.generate on (or names the session as its user would); the session's first message
then starts one title request to the session's model in the background, answered from the
setup's ``title_reply``; the scenario ends with how many title requests came and the title.

The generator aims its scenarios at the cases the issue names (a goal that completes, a goal
that pauses at the stall cap, a reminder, a forced call missed until NotCalled, a loop cut and
retried with a note, a leaked call rebuilt, broken arguments repaired and refused, a 429
retried) and at the rest of the loop's rules.

The chat (memory.md; the scenarios from CHAT_FIRST on): the session is the chat (``eukhe.agent.chat``),
which answers from the chat memory of the agent dir: a run's request opens with the view (told as
``v<lines>``, the view's line count), the date line (``+now``, its clock left out) and the turn's
mark (``+turn``) before the message (``+u<length>``); what the run commits is logged to the chat as
it is committed (a line each), so a task's child, which starts from the view, and a later run see
it; a background report that comes with no turn running is logged too; zoom and date are tools.

Session compaction (S6.6): a scenario whose setup names ``compaction`` gives its model a window
and a reserve (models.json contextWindow and maxTokens) that put every request of the scenario
over the background threshold (``background``: threshold 400 tokens, limit 10,400, every request
at least the system prompt and the tools, about 745) or over the limit (``blocking``: limit 500),
and sets compaction.keepRecentTokens to ``keep_recent``. The server answers a summary request
(its last message the summary prompt) from the input's ``summaries``, not from the replies, and
tells it as a ``summary sent=...`` line when the compaction's row comes. Over the threshold the
summary request waits until the request that started it has arrived, and that request's reply
waits until the compaction has ended (its row): the summary is ready before the reply, whenever
the threads run.

Subagents: a child is the real ``python -m eukhe.agent.child`` process, started by the agent for
the model's ``task`` call or for ``/agent NAME TASK``; it reaches the same server, which knows its
requests by the system prompt that names it and answers them from that child's replies (the
input's ``children``, or the ``agent`` event's). Its requests and its relayed events come by two
ways (HTTP here, its pipe to the agent there), so a child's lines are told as one block when its
report comes: its start (the pid left out), its requests, its events. The ``agent`` events in a
row are sent together, and the scenario waits for their reports; a child's requests wait until
the children started before it have ended, so the reports come in the order they started.

Reasoning: a reply's ``thinking`` is streamed before its text (openai-completions'
``reasoning_content``, one chunk a piece); each ``thinking`` event the agent's clients are sent is
a transcript line (a child's in its block). The scenarios after the stalls (KILL_FIRST on): a child
whose bash call kills its own process (``killed``: SIGKILL, sent only when the call's parent is a
subagent's process), so its pipe ends with no report, and whose agents/NAME.cfg does not parse
(``broken_cfg``: its settings_error row told by the file's name); the parent's first request also
reads an empty path and a FIFO, and greps the FIFO (FIFO: a file that is no regular file), and reads,
edits and greps a file past the tools' read limit (HUGE); and a
turn aborted while its first request waits for a slot (``slots_held`` ``"abort"``); then main's
Director stack document made unreadable while a reply's request runs (``break_stack``: the turn fails,
``error turn_failed``, and so do the pushes and turns after it). The steering scenarios also send
steer, follow_up or abort right after the turn request, before its run has begun (an input's
``early``): the runner holds the messages for the loop it is about to make, and an abort ends the
turn before it begins. The last scenario (SPAWN_FIRST) starts the child process itself, as no agent
would, with spawn lines of its own (``spawn_line``): one that is not JSON, one that is JSON but not
an object, and one naming a parent that is not the child's; each is told as the child's exit
status and its stderr line (what the JSON reader said after it is cut).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import random
import re
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from bend.agent import transcript as model_transcript
from bridge.core import Bridge, Event, Shared
from eukhe.agent import daemon
from eukhe.agent import protocol as p
from eukhe.agent.chat import CHAT, CHAT_SESSION, CONTEXT_DOC
from eukhe.agent.compaction import SUMMARY_INTRO, SUMMARY_PROMPT
from eukhe.agent.daemon import MODEL_DOC
from eukhe.agent.runner import TITLE_DOC, runner_factory
from eukhe.agent.tools.files import MAX_READ_BYTES
from eukhe.directors.document import DIRECTORS_DOC
from eukhe.inference import toolcalls
from eukhe.inference.force import soft_prompt
from eukhe.memory.prompts import turn_text
from eukhe.session import MAIN, Store
from eukhe.tiny.uses import TITLE_PROMPT
from spec import breaks
from spec.loopback import Call, Cut, Fail, LoopbackServer, Recorded, Stream, Text, Thinking, Wait, base_url

API = "openai-completions"
FILES = {
    "a.txt": "alpha\nfirst file\n",
    "b.txt": "beta\nsecond file\n",
    "src/c.py": "print('gamma')\n",
    "bin.dat": "\x00\x01binary\n",  # a NUL byte: read refuses it, grep skips it
    "empty.txt": "",
    "latin.txt": "caf\udce9\n",  # the byte 0xe9 (written with surrogateescape): not UTF-8, so binary to read and grep
    ".hidden": "hidden alpha\n",  # glob and grep skip it unless a pattern names it
}
LOOP_LINE = "I will check the file again.\n"
CUT_TEXT = "Let me look at"
FAIL_BODY = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'

# Calls the scripts make: name, argument text, the act key (one per distinct call), the outcome
# kind the seed's rules give it (ok; tool_unavailable for a tool not offered, S6 repair rule 6;
# invalid_arguments for arguments no repair reads or a required key missing; the tools' own refusals).
POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "a.txt"}', "read-a", "ok"),
    ("read", '{"path": "b.txt",}', "read-b-trailing-comma", "ok"),
    ("read", "{'path': 'src/c.py'}", "read-c-single-quotes", "ok"),
    ("read", '{"path": "missing.txt"}', "read-missing", "not_found"),
    ("read", '{"path": "../outside.txt"}', "read-outside", "outside_workdir"),
    ("read", '{"path": ', "read-cut-json", "invalid_arguments"),
    ("read", "{}", "read-no-path", "invalid_arguments"),
    ("ls", '{"path": "."}', "ls-root", "ok"),
    ("ls", '{"path": "src"}', "ls-src", "ok"),
    ("glob", '{"pattern": "*.txt"}', "glob-txt", "ok"),
    ("grep", '{"pattern": "alpha"}', "grep-alpha", "ok"),
    ("read", '{"path": "src"}', "read-dir", "is_directory"),
    ("read", '{"path": "a.txt", "offset": 9}', "read-past-end", "bad_range"),
    ("grep", '{"pattern": "("}', "grep-bad-pattern", "bad_pattern"),
    # writes that leave the files as they were, so every call's result is the same whenever it runs
    ("write", '{"path": "src/c.py", "content": "print(\'gamma\')\\n"}', "write-same", "ok"),
    ("write", '{"path": "../outside.txt", "content": ""}', "write-outside", "outside_workdir"),
    ("edit", '{"path": "a.txt", "old": "alpha", "new": "alpha"}', "edit-unchanged", "unchanged"),
    ("edit", '{"path": "a.txt", "old": "omega", "new": "x"}', "edit-absent", "old_not_found"),
    ("edit", '{"path": "b.txt", "old": "e", "new": "E"}', "edit-not-unique", "old_not_unique"),
    ("bash", '{"command": "cat a.txt"}', "bash-cat", "ok"),
    ("bash", '{"command": "exit 3"}', "bash-exit", "exit_status"),
    ("bash", '{"command": "sleep 30", "timeout_ms": 50}', "bash-timeout", "timeout"),
    # the tools' other input classes (impl/eukhe/agent/tools: base, schema, files, search, bash)
    ("read", '{"path": "a.txt", "limit": 1}', "read-limit", "ok"),
    ("read", '{"path": "empty.txt"}', "read-empty", "ok"),
    ("read", '{"path": "bin.dat"}', "read-binary", "binary_file"),
    ("read", '{"path": "latin.txt"}', "read-not-utf8", "binary_file"),
    ("read", '{"path": "a.txt", "offset": 0}', "read-offset-zero", "invalid_arguments"),
    ("read", '{"path": "a.txt", "lines": 2}', "read-unknown-key", "unknown_key"),
    ("read", '{"path": "a\\u0000.txt"}', "read-nul-path", "invalid_arguments"),
    ("write", '{"path": "a.txt/x", "content": ""}', "write-under-file", "not_a_directory"),
    ("write", '{"path": "src", "content": ""}', "write-over-dir", "is_directory"),
    ("edit", '{"path": "missing.txt", "old": "a", "new": "b"}', "edit-missing", "not_found"),
    ("edit", '{"path": "src", "old": "a", "new": "b"}', "edit-dir", "is_directory"),
    ("edit", '{"path": "a.txt", "old": "omega", "new": "x", "all": true}', "edit-all-absent", "old_not_found"),
    ("edit", '{"path": "b.txt", "old": "e", "new": "e", "all": true}', "edit-all-unchanged", "unchanged"),
    ("ls", "{}", "ls-default", "ok"),
    ("ls", '{"path": "a.txt"}', "ls-file", "not_a_directory"),
    ("ls", '{"path": "nowhere"}', "ls-missing", "not_found"),
    ("glob", '{"pattern": "**/*.py"}', "glob-deep", "ok"),
    ("glob", '{"pattern": ".*"}', "glob-hidden", "ok"),
    ("glob", '{"pattern": "*.md"}', "glob-none", "ok"),
    ("glob", '{"pattern": "../*"}', "glob-climb", "outside_workdir"),
    ("glob", '{"pattern": "/etc/*"}', "glob-absolute", "outside_workdir"),
    ("grep", '{"pattern": "gamma", "path": "src/c.py"}', "grep-file", "ok"),
    ("grep", '{"pattern": "i", "glob": "*.py"}', "grep-glob-name", "ok"),
    ("grep", '{"pattern": "i", "glob": "src/*"}', "grep-glob-path", "ok"),
    ("grep", '{"pattern": "zeta"}', "grep-none", "ok"),
    ("grep", '{"pattern": "a", "path": "nowhere"}', "grep-missing", "not_found"),
    ("bash", '{"command": "printf x"}', "bash-no-newline", "ok"),
    ("bash", '{"command": "true"}', "bash-silent", "ok"),
    ("ghost", '{"path": "a.txt"}', "ghost", "tool_unavailable"),
    ("reed", '{"path": "a.txt"}', "reed", "tool_unavailable"),
)
# bash past the output cap (memory.md rule 9: head and tail kept), a job left running in the
# background (its group ended with the call), bytes that are not UTF-8, and a timeout asked past the
# session's toolBlockingBudgetMs (TOOL_BUDGET_MS in the scenarios that ask it): the budget holds.
BASH_POOL: tuple[tuple[str, str, str, str], ...] = (
    ("bash", '{"command": "seq 1 30000"}', "bash-large", "ok"),
    ("bash", '{"command": "seq 1 8000"}', "bash-mid", "ok"),
    ("bash", '{"command": "seq 1 30000; exit 2"}', "bash-large-exit", "exit_status"),
    ("bash", '{"command": "sleep 30 & echo started"}', "bash-background", "ok"),
    ("bash", '{"command": "printf \'\\\\377x\\\\n\'"}', "bash-not-utf8", "ok"),
    ("bash", '{"command": "sleep 30", "timeout_ms": 600000}', "bash-over-budget", "timeout"),
)
TOOL_BUDGET_MS = 1000
# The tools' fault paths (impl/eukhe/agent/tools: base, files, search) on files only these calls
# touch: an argument UTF-8 cannot carry (a lone surrogate the model wrote as ``\\ud800``: refused
# before the tool runs, and the call sent again in the next request), a name past the system's
# limit (the OS error told as io_error), an edit that applies (its file only grows: the call is ok
# whenever it runs), a write that makes a new file, and grep over a tree holding links (one
# leading outside, one dangling: skipped, not searched).
LONG_NAME = "n" * 300
EXTRA_POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "\\ud800.txt"}', "read-lone-surrogate", "invalid_arguments"),
    ("read", '{"path": "' + LONG_NAME + '"}', "read-name-too-long", "io_error"),
    ("ls", '{"path": "' + LONG_NAME + '"}', "ls-name-too-long", "io_error"),
    ("edit", '{"path": "grow.txt", "old": "q\\n", "new": "q\\nz"}', "edit-grow", "ok"),
    ("edit", '{"path": "grow.txt", "old": "q\\n", "new": "q\\nz", "all": true}', "edit-grow-all", "ok"),
    ("write", '{"path": "new.txt", "content": "new\\n"}', "write-new", "ok"),
    ("grep", '{"pattern": "outside"}', "grep-over-links", "ok"),
    ("grep", '{"pattern": "a", "path": "src/gone.lnk"}', "grep-dangling-link", "not_found"),
)
EDIT_BINARY = ("edit", '{"path": "bin.dat", "old": "a", "new": "b"}', "edit-binary", "binary_file")
FIFO = ".fifo"  # a named pipe in the working directory: no regular file (hidden: glob and grep skip it)
HUGE = ".huge/big.bin"  # one byte past the tools' read limit (a sparse file; hidden, as FIFO)
FIFO_CALLS: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": ""}', "read-empty-path", "invalid_arguments"),
    ("read", '{"path": "' + FIFO + '"}', "read-fifo", "not_a_file"),
    ("grep", '{"pattern": "a", "path": "' + FIFO + '"}', "grep-fifo", "ok"),
    ("read", '{"path": "' + HUGE + '"}', "read-too-large", "too_large"),
    ("edit", '{"path": "' + HUGE + '", "old": "a", "new": "b"}', "edit-too-large", "too_large"),
    ("grep", '{"pattern": "a", "path": ".huge"}', "grep-too-large", "ok"),
)
# A bash call that kills the process that runs it when that is a subagent's (SIGKILL): the child
# dies before it reports. Run by anything else (the agent itself), it does nothing.
KILL_COMMAND = "case \"$(tr '\\0' ' ' < /proc/$PPID/cmdline)\" in *eukhe.agent.child*) kill -9 $PPID;; esac"
KILL_CALL = ("bash", json.dumps({"command": KILL_COMMAND}), "bash-kill-child", "killed")
BROKEN_CFG = 'set serviceTier "unclosed\n'  # an agents/NAME.cfg that does not parse
THINKING = (("Let me think.", " The files are small."), ("First, ", "the plan; ", "then the work."), ("Hm.", " Hm."))
EXTRA_FILES = {"grow.txt": "q\n"}  # outside FILES: the generator draws from FILES
LINKS = {"src/out.lnk": "../../outside.txt", "src/gone.lnk": "nothing.txt"}
SEQ_OUTPUT = {"bash-large": (30000, 0), "bash-mid": (8000, 0), "bash-large-exit": (30000, 2)}  # seq 1 N, then its exit code
LEAK_POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "a.txt"}', "read-a", "ok"),
    ("ls", '{"path": "src"}', "ls-src", "ok"),
    ("ghost", '{"path": "a.txt"}', "ghost", "tool_unavailable"),
)

CASES = frozenset(
    {
        "goal_completes",
        "goal_pauses_at_stall_cap",
        "goal_note_under_cap",
        "reminder_joins_continuation",
        "reminder_waits",
        "forced_called",
        "forced_native_retry",
        "forced_not_called",
        "autonomous_continues",
        "autonomous_limit",
        "push_refused",
        "note_loop",
        "note_cut",
        "note_no_answer",
        "note_length",
        "note_leak",
        "max_notes",
        "leak_rebuilt",
        "truncated_calls",
        "repaired_arguments",
        "tool_unavailable",
        "invalid_arguments",
        "retry_429",
        "retries_exhausted",
        "max_tool_rounds",
        "refused",
        "no_step",
        "model_error",
        "no_layer",
        # input classes
        "compaction_ready",
        "compaction_placed_next_run",
        "compaction_placed_in_turn",
        "compaction_blocking",
        "compaction_failed",
        "compaction_empty_summary",
        "compaction_queued_starts_none",
        "compaction_again",
        "compaction_after_join",
        "task_report",
        "task_default_name",
        "task_child_failed",
        "task_no_slots",
        "task_blank_refused",
        "agent_report",
        "agent_waits_for_slot",
        "agent_concurrent",
        "agent_busy",
        "agent_no_slots",
        "agent_invalid_name",
        "agent_report_joins_run",
        "steer_joins",
        "steer_joins_as_one",
        "steer_runs_next",
        "follow_up_runs",
        "several_inputs",
        "default_reply",
        "parallel_calls",
        "bash_output_past_cap",
        "bash_output_between_caps",
        "bash_job_left_running",
        "bash_not_utf8",
        "bash_timeout_past_budget",
        "turn_busy",
        "turn_aborted",
        "title_from_the_session_model",
        "title_none",
        "title_of_a_named_session",
        "request_waits_for_a_slot",
        "argument_not_utf8",
        "tool_io_error",
        "edit_applied",
        "write_new_file",
        "grep_over_links",
        "notes_spent_leak_answers",
        "edit_binary_refused",
        "chat_turn_from_the_view",
        "chat_view_grows",
        "chat_memory_tools",
        "chat_task_from_the_view",
        "chat_report_logged",
        "task_child_stalled",
        "thinking_streamed",
        "thinking_of_a_child",
        "child_killed_without_report",
        "child_settings_error",
        "request_aborted_waiting_for_a_slot",
        "tool_not_a_file",
        "tool_empty_path",
        "tool_file_too_large",
        "rewind_refused_while_a_turn_runs",
        "rewind_refused_while_a_child_runs",
        "model_unresolved_turn_fails",
        "child_model_unresolved",
        "agent_stops_while_a_turn_runs",
        "abort_as_the_turn_starts",
        "steer_as_the_turn_starts",
        "follow_up_as_the_turn_starts",
        "turn_fails_when_the_stack_breaks",
        "turn_fails_on_a_broken_stack",
        "child_spawn_not_json",
        "child_spawn_not_an_object",
        "child_parent_gone",
    }
)


# -- the production side ---------------------------------------------------------------------------


DEFAULT_SUMMARY = "The work so far."
SETTLE_CAP = 60.0  # seconds a reply waits for a compaction's end at most (the server never hangs a run)
CHILD = re.compile(r"You are the subagent ([A-Za-z][A-Za-z0-9_-]{0,63}):")


def child_of(body: Any) -> str | None:
    """The subagent a request comes from (its system prompt names it), else None."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    for message in messages:
        if isinstance(message, dict) and message.get("role") in ("system", "developer"):
            found = CHILD.search(_text(message))
            if found:
                return found.group(1)
    return None


def is_summary(body: Any) -> bool:
    """Whether a request asks for a compaction's summary (its last message the summary prompt)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and bool(messages) and isinstance(messages[-1], dict) and _text(messages[-1]) == SUMMARY_PROMPT


def is_title(body: Any) -> bool:
    """Whether a request asks for the session's title (its one message the title prompt)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict) and _text(messages[0]).startswith(TITLE_PROMPT)


def summary_script(summary: dict[str, Any]) -> Any:
    if summary.get("fault") == "fail":
        return Fail(500, '{"error": {"type": "server_error", "message": "no summary"}}')
    text = str(summary.get("text", ""))
    return Stream([Text(text)] if text else [])


class _Recording(LoopbackServer):
    """The loopback server, telling each request as a transcript line as it arrives; a summary
    request is answered from the summaries and told when its compaction's row comes."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] | None = None
        self.responder = lambda recorded: Stream([Text("done.")])
        self.summaries: list[dict[str, Any]] = []
        self.summary_lines: list[str] = []
        self.summary_gate: threading.Event | None = None  # over the threshold: a request of the turn lets the summary go
        self.compacting: Any = None  # () -> whether a compaction runs (the agent's)
        self.settled = 0  # compactions ended (their rows told)
        self._settle = threading.Condition()
        self.children: dict[str, list[Any]] = {}  # the replies of each child name
        self.child_lines: dict[str, list[str]] = {}  # the requests of each child, as transcript lines
        self.started: list[str] = []  # the background children, in the order they started
        self.ended: set[str] = set()  # the children whose reports came
        self.title: Any = None  # the reply to the session's title request (inference.md S9)
        self.title_requests = 0
        self.hang = threading.Event()  # a child's request that hangs waits for it: set as a child's block is told

    def drop_scripts(self) -> None:
        """Forget the replies and summaries a turn did not take, and the requests recorded so far."""
        with self._lock:
            self._scripts.clear()
            self.requests.clear()
            self.summaries.clear()
            self.summary_lines.clear()
            self.children.clear()
            self.child_lines.clear()
        with self._settle:
            self.started.clear()
            self.ended.clear()

    def child_ended(self, name: str) -> None:
        with self._settle:
            self.ended.add(name)
            self._settle.notify_all()

    def ended_compaction(self) -> None:
        with self._settle:
            self.settled += 1
            self._settle.notify_all()

    def _record(self, recorded: Recorded) -> None:
        if is_title(recorded.body):  # the title's request runs beside the turn: counted, told at the end
            with self._lock:
                self.title_requests += 1
            return
        if is_summary(recorded.body):
            with self._lock:
                self.summary_lines.append("summary sent=" + message_tokens(cast(dict[str, Any], recorded.body)["messages"][:-1]))
            return
        name = child_of(recorded.body)
        if name is not None:
            with self._lock:
                self.child_lines.setdefault(name, []).append(request_line(recorded.body))
            return
        super()._record(recorded)
        if self.lines is not None:
            self.lines.append(request_line(recorded.body))

    def _next(self, recorded: Recorded) -> Any:
        if is_title(recorded.body):
            with self._lock:
                script, self.title = self.title, None
            return script if script is not None else Stream([Text("done.")])
        if is_summary(recorded.body):
            gate = self.summary_gate
            if gate is not None:
                gate.wait(SETTLE_CAP)
                gate.clear()
            with self._lock:
                summary = self.summaries.pop(0) if self.summaries else {"text": DEFAULT_SUMMARY}
            return summary_script(summary)
        name = child_of(recorded.body)
        if name is not None:
            with self._settle:  # the children started before it end first
                earlier = self.started[: self.started.index(name)] if name in self.started else []
                self._settle.wait_for(lambda: all(b in self.ended for b in earlier), SETTLE_CAP)
            with self._lock:
                queue = self.children.get(name, [])
                return queue.pop(0) if queue else Stream([Text("done.")])
        compacting = self.compacting
        if compacting is not None and self.summary_gate is not None:
            with self._settle:
                before = self.settled
            if compacting():  # a compaction started at this request: its summary first, then the reply
                self.summary_gate.set()
                with self._settle:
                    self._settle.wait_for(lambda: self.settled > before, SETTLE_CAP)
        return super()._next(recorded)


NOTES = (
    ("Your last reply repeated itself", "loop"),
    ("Your last reply was cut off", "cut"),
    (toolcalls.NO_ANSWER_NOTE, "no_answer"),
    (toolcalls.LENGTH_NOTE_TEXT, "length"),
    (toolcalls.LEAK_NOTE, "leak"),
)


def request_line(body: Any) -> str:
    """``request forced=TOOL/native|soft|- note=KIND|- sent=MESSAGES`` from the JSON body of a
    chat request: the forced tool, the note the request ends with, and the conversation it
    sends (``message_tokens``)."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    texts = [_text(m) for m in messages]
    forced = "-"
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        forced = f"{choice['function']['name']}/native"
    else:
        for name in SOFT_NAMES:
            if any(soft_prompt(name) in text for text in texts):
                forced = f"{name}/soft"
    note = "-"
    for text in texts:
        for mark, kind in NOTES:
            if mark in text:
                note = kind
    return f"request forced={forced} note={note} sent={message_tokens(messages)}"


SOFT_NAMES = ("read", "write", "edit", "ls", "glob", "grep", "bash", "ghost")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def message_tokens(messages: Sequence[dict[str, Any]]) -> str:
    """The conversation a request sends, one token a message: ``u<length>`` a user message (its
    text's length, the soft prompt left out), ``a`` a reply, ``a:NAME,NAME`` a reply with its
    calls, ``t`` a tool result; the system prompt and the note are left out (the note is
    ``note=``). ``-`` when nothing is left."""
    tokens: list[str] = []
    for message in messages:
        role, text = message.get("role"), _text(message)
        if role == "user":
            if any(mark in text for mark, _ in NOTES):
                continue
            for name in SOFT_NAMES:
                text = text.replace("\n\n" + soft_prompt(name), "").replace(soft_prompt(name), "")
            viewed = view_token(text)
            if viewed is not None:
                tokens.append(viewed)
            elif text.startswith(SUMMARY_INTRO):
                tokens.append(f"s{len(text) - len(SUMMARY_INTRO)}")
            elif text:
                tokens.append(f"u{len(text)}")
        elif role == "assistant":
            calls = [str(c.get("function", {}).get("name")) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            tokens.append("a:" + ",".join(calls) if calls else "a")
        elif role == "tool":
            tokens.append("t")
    return " ".join(tokens) or "-"


TURN_LEAD = turn_text("")  # the mark a chat's turn puts before the user's message (memory.md D11)


def view_token(text: str) -> str | None:
    """A chat's user message that opens with the view (memory.md rule 26): ``v<lines>``, the
    view's line count; ``+now`` the date line after it (its clock left out); ``+turn`` the turn's
    mark; ``+u<length>`` the rest (the user's message, or a subagent's task). None for any other."""
    if not text.startswith("<chat>\n") or "</chat>" not in text:
        return None
    view, _, rest = text[len("<chat>\n") :].partition("</chat>")
    token = f"v{view.count(chr(10))}"
    rest = rest.removeprefix("\n\n")
    if rest.startswith("Now: "):
        token += "+now"
        rest = rest.partition("\n\n")[2]
    if rest.startswith(TURN_LEAD):
        token += "+turn"
        rest = rest[len(TURN_LEAD) :]
    return f"{token}+u{len(rest)}"


def _started() -> _Recording:
    server = _Recording()
    server.start()
    return server


_SERVER: Shared[_Recording] = Shared(_started, lambda server: server.close())
finish = _SERVER.close


def script_of(reply: dict[str, Any], gate: threading.Event | None = None, hang: threading.Event | None = None) -> Any:
    """A scenario reply as the loopback server plays it; with a ``gate``, its stream first waits
    for it (the messages sent while its request runs are sent meanwhile). A child's reply that
    hangs (``fault`` ``hang``) sends nothing until ``hang`` is set (its report has come)."""
    fault = reply.get("fault", "")
    if fault == "hang":
        assert hang is not None, "only a child's reply hangs"
        return Stream([Wait(hang)])
    held: list[Any] = [] if gate is None else [Wait(gate)]
    if fault == "fail":
        return Fail(429, FAIL_BODY, headers=(("retry-after", "0"),))
    if fault == "cut":
        return Stream([*held, Text(CUT_TEXT), Cut()])
    if fault == "loop":
        return Stream([*held, Text(LOOP_LINE * 80)])
    text = str(reply.get("text", ""))
    for leak in reply.get("leaks", []):
        text += "\n<tool_call>\n" + json.dumps({"name": leak["name"], "arguments": json.loads(leak["args"])}) + "\n</tool_call>"
    parts: list[Any] = [*held, *(Thinking(str(piece)) for piece in reply.get("thinking", [])), *([Text(text)] if text else [])]
    parts += [Call(call["name"], call["args"]) for call in reply.get("calls", [])]
    return Stream(parts, stop=str(reply.get("stop", "stop")))


SETUP_CVARS = {
    "max_steps": "directors.maxSteps",
    "stack_cap": "directors.stackCap",
    "stall_steps": "directors.stallSteps",
    "max_continuations": "autonomous.maxContinuations",
    "max_tool_rounds": "maxToolRounds",
    "max_retries": "retry.maxRetries",
    "steering_mode": "steeringMode",
    "follow_up_mode": "followUpMode",
    "keep_recent": "compaction.keepRecentTokens",
    "max_subagents": "subagentMaxConcurrency",
    "tool_budget": "toolBlockingBudgetMs",
    "stall_ms": "subagentStallMs",
}
# The model's window and maxTokens (the reserve) for each compaction setup (the module's docstring).
WINDOWS = {"background": (100_000, 89_600), "blocking": (1_000, 500)}
# The agent dir's settings: no titles (a title's request is no part of the loop) but in the scenarios
# whose setup names ``titles`` (the title request is answered from ``title_reply``, counted and not
# told as a request line; the title is told at the scenario's end), and at most two
# requests in flight to the provider (each request takes a slot, eukhe.agent.inflight: a turn's, a
# summary's, and those of the children running at once).
PROVIDER, IN_FLIGHT = "loop", 4
SETTINGS = {"titles": {"generate": False}, "providerMaxInFlight": {PROVIDER: IN_FLIGHT}}


class _Printer:
    def __init__(self, lines: list[str], server: _Recording) -> None:
        self.lines = lines
        self.server = server
        self.names: dict[str, str] = {}
        self.blocks: dict[str, tuple[list[str], _Printer]] = {}  # each child's start and events, told at its end
        self.limit = 4  # subagentMaxConcurrency
        self.starts = 0  # children started so far
        self.reports = 0  # children whose reports came so far
        self.titles: list[str] = []  # the title rows

    def child(self, name: str) -> tuple[list[str], _Printer]:
        if name not in self.blocks:
            block: list[str] = []
            self.blocks[name] = (block, _Printer([], self.server))
        return self.blocks[name]

    def flush(self, name: str) -> None:
        """Child ``name``'s block: its start, its requests, its events."""
        start, printer = self.blocks.pop(name, ([], _Printer([], self.server)))
        self.server.hang.set()  # a hung request of that child (it stalled) is let go: nobody reads it
        with self.server._lock:
            requests = self.server.child_lines.pop(name, [])
        self.lines.extend(f"sub {name}: {line}" for line in [*start, *requests, *printer.lines])

    def subagent(self, text: str) -> None:
        found = re.match(r"([A-Za-z][A-Za-z0-9_-]*) starts \(pid \d+\): (.*)$", text, re.S)
        report = re.match(r"\[([A-Za-z][A-Za-z0-9_-]*)\] ", text)
        if found:
            # a start while as many children run as subagentMaxConcurrency allows would be past it
            self.starts += 1
            past = self.starts - self.reports > self.limit
            self.child(found.group(1))[0].append(("starts past subagentMaxConcurrency: " if past else "starts: ") + found.group(2))
        elif report:
            self.reports += 1
            self.flush(report.group(1))
            self.lines.append(f"row subagent: {text}")
            self.server.child_ended(report.group(1))
        else:
            self.lines.append(f"row subagent: {text}")

    def compaction(self, text: str) -> None:
        """A compaction's row: the summary request it sent before its end (ready or failed; a
        failed request's own words left out), its placement without the entry id (the request
        lines show the view)."""
        if text.startswith(("compaction ready", "compaction failed")):
            with self.server._lock:
                sent = self.server.summary_lines.pop(0) if self.server.summary_lines else "summary sent=(none)"
            self.lines.append(sent)
            if text.startswith("compaction failed") and text != "compaction failed: the summary is empty":
                text = "compaction failed: (the summary request failed)"
            self.lines.append(f"row compaction: {text}")
            self.server.ended_compaction()
        else:
            self.lines.append("row compaction: " + re.sub(r"; the view keeps the entries from \d+ on$", "", text))

    def emit(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "note":
            self.lines.append(f"note {event['kind']} {event['used']}/{event['max']}")
        elif kind == "retry":
            self.lines.append(f"retry {event['attempt']}/{event['retries']}")
        elif kind == "tool_call":
            self.names[event["id"]] = event["name"]
        elif kind == "tool_result" and self.names[event["id"]] == "task":
            self.reports += 1 if self.blocks else 0
            for name in list(self.blocks):
                self.flush(name)
            shown = event["kind"] or "ok"
            self.lines.append(f"call task {shown}" + (f" {event['text']}" if shown == "ok" else ""))
        elif kind == "tool_result":
            self.lines.append(f"call {self.names[event['id']]} {event['kind'] or 'ok'}" + long_result(self.names[event["id"]], event["text"]))
        elif kind == "subagent":
            self.child(event["agent"])[1].emit(event["event"])
        elif kind == "row" and event["kind"] == "subagent":
            self.subagent(event["text"])
        elif kind == "step":
            self.lines.append(f"step {event['decision']} {event['rule']} {','.join(event['verdicts']) or '-'}")
            if event["continuation"] is not None:
                self.lines.append("continuation " + json.dumps(event["continuation"], ensure_ascii=False))
        elif kind == "row" and event["kind"] == "compaction":
            self.compaction(event["text"])
        elif kind == "thinking":  # a piece of a reply's reasoning, as streamed
            self.lines.append("thinking " + json.dumps(event["text"], ensure_ascii=False))
        elif kind == "row" and event["kind"] == "settings_error":  # the document it names, without its directory
            self.lines.append(f"row settings_error: {Path(event['text'].split(':', 1)[0]).name}")
        elif kind == "row" and event["kind"] == "title":  # it comes whenever its request ends: told at the end
            self.titles.append(event["text"])
        elif kind == "row":  # a row of several messages (steering joined as one) stays one transcript line
            self.lines.append(f"row {event['kind']}: {event['text']}".replace("\n", "\\n"))
        elif kind == "turn_end":
            self.lines.append(f"end {event['reason']}")
        elif kind == "error" and event["kind"] == "turn_failed":  # the turn loop itself failed (no request's answer)
            self.lines.append(f"error {event['kind']}")


def long_result(name: str, text: str) -> str:
    """A bash result past 1,000 characters: `` [LENGTH chars, lines FIRST..LAST, STATUS]`` (the
    first and the last line of its output, its status line); else nothing."""
    if name != "bash" or len(text) <= 1000:
        return ""
    lines = text.split("\n")
    return f" [{len(text)} chars, lines {lines[0]}..{lines[-2]}, {lines[-1]}]"


class _Client:
    """A client of the agent process that hands each event it is sent to the printer."""

    def __init__(self, printer: _Printer) -> None:
        self.closed = False
        self.printer = printer
        self.replies: list[dict[str, Any]] = []
        self.task: asyncio.Future[None] = asyncio.get_running_loop().create_future()  # nothing left to write
        self.task.set_result(None)

    def finish(self) -> None:  # the agent ends: this client's connection with it
        self.closed = True

    def drop(self) -> None:
        self.closed = True

    def send(self, line: bytes) -> None:
        event = json.loads(line)
        if "re" in event:  # a reply to the request
            self.replies.append(event)
        self.printer.emit(event)


def production(events: Sequence[Event]) -> list[str]:
    key = os.environ.pop(NO_KEY, None)  # the agent dir holds no credentials of that provider: nor does the environment
    try:
        with tempfile.TemporaryDirectory() as site, breaks.reaching_children(Path(site)):  # the subagents' processes
            return _production(events)
    finally:
        if key is not None:
            os.environ[NO_KEY] = key


def _production(events: Sequence[Event]) -> list[str]:
    server = _SERVER.get()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = root / "work"
        for name, text in FILES.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8", errors="surrogateescape")
        (root / "outside.txt").write_text("outside\n", encoding="utf-8")
        for name, text in EXTRA_FILES.items():
            (work / name).write_text(text, encoding="utf-8")
        for name, target in LINKS.items():
            os.symlink(target, work / name)
        os.mkfifo(work / FIFO)
        (work / HUGE).parent.mkdir()
        with open(work / HUGE, "wb") as huge:
            huge.truncate(MAX_READ_BYTES + 1)
        agent_dir = root / "agent"
        agent_dir.mkdir()
        model: dict[str, Any] = {"id": "loop-model"}
        setup = next((dict(e["setup"]) for e in events if "setup" in e), {})
        if setup.get("compaction") in WINDOWS:
            model["contextWindow"], model["maxTokens"] = WINDOWS[str(setup["compaction"])]
        provider = {"baseUrl": base_url(server, API), "apiKey": "key-loop", "api": API, "models": [model]}
        (agent_dir / "models.json").write_text(json.dumps({"providers": {"loop": provider}}), encoding="utf-8")
        settings = dict(SETTINGS, titles={"generate": True}) if "titles" in setup else SETTINGS
        (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        for name in setup.get("broken_cfg", []):  # a child's profile that does not parse
            (agent_dir / "agents").mkdir(exist_ok=True)
            (agent_dir / "agents" / f"{name}.cfg").write_text(BROKEN_CFG, encoding="utf-8")
        chat = setup.get("chat") is True  # the session is the chat: it answers from the chat memory
        with Store(agent_dir / "sessions").create(CHAT_SESSION if chat else None) as session:
            session.conversation(MAIN).commit(documents={MODEL_DOC: {"provider": "loop", "id": "loop-model"}, **({CONTEXT_DOC: CHAT} if chat else {})})
            if setup.get("titles") == "named":  # the user named the session: it keeps its name
                session.conversation(MAIN).commit(documents={TITLE_DOC: {"title": "My own name", "by": "user"}})
            asyncio.run(_serve(server, agent_dir, work, session, events, lines))
    return lines


def hold_slots(agent_dir: Path) -> list[int]:
    """Every providerMaxInFlight slot of the scenarios' provider, taken as another process of the
    agent dir would hold them (eukhe.agent.inflight: an exclusive flock on each slot file)."""
    directory = agent_dir.joinpath("run", "inflight", PROVIDER)
    directory.mkdir(parents=True, exist_ok=True)
    held = []
    for index in range(IN_FLIGHT):
        fd = os.open(directory / f"{index}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.append(fd)
    return held


def waiters(fds: Sequence[int]) -> bool:
    """Whether a lock request waits on one of the held slot files (the kernel's /proc/locks lists a
    blocked request as ``->`` before its lock's device and inode)."""
    inodes = {os.fstat(fd).st_ino for fd in fds}
    with open("/proc/locks", encoding="ascii") as table:
        for line in table:
            fields = line.split()
            if len(fields) > 5 and fields[1] == "->" and int(fields[6].rsplit(":", 1)[1]) in inodes:
                return True
    return False


async def release_when_waited(held: list[int], server: _Recording) -> str:
    """The slots let go once the turn's request waits for one (what the line says), or once the
    request came all the same (no slot stopped it: a breach of providerMaxInFlight)."""
    while not waiters(held) and not server.requests:
        await asyncio.sleep(0.001)
    came = bool(server.requests)
    for fd in held:
        os.close(fd)
    return "slots held: the request came while every slot was held" if came else "slots held: the request waited for one"


SPAWN_DEADLINE = 60.0  # seconds a child started with a spawn line of its own has to end
SPAWN_WORDS = re.compile(r"(?<=the spawn line is not a JSON object): .*$")  # the JSON reader's own words


async def spawn_child(line: object, work: Path) -> str:
    """The child process started with ``line`` as its spawn (an object is sent as its JSON), as
    no agent would: its exit status and the first line it wrote to stderr (cut after the spawn
    line's words); its stdout must be empty."""
    sent = (json.dumps(line) if isinstance(line, dict) else str(line)).encode("utf-8") + b"\n"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "eukhe.agent.child", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=work,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(sent), SPAWN_DEADLINE)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        return f"spawn did not end within {SPAWN_DEADLINE:.0f} s"
    said = err.decode("utf-8", "replace").splitlines()
    told = f"spawn exit {process.returncode}" + (f": {SPAWN_WORDS.sub('', said[0])}" if said else "")
    return told + (f" stdout {out[:200]!r}" if out else "")


def rewind_line(said: dict[str, Any]) -> str:
    return f"rewind refused {said['kind']}" if said["type"] == "error" else f"rewind {said['type']}"


async def abort_when_waited(held: list[int], server: _Recording, agent: daemon.Daemon, ask: Any, lines: list[str]) -> None:
    """Once the turn's request waits for a slot, the turn is aborted (what the lines say); the
    slots are let go once the turn has ended. A request that came all the same is a breach."""
    while not waiters(held) and not server.requests:
        await asyncio.sleep(0.001)
    if server.requests:
        lines.append("slots held: the request came while every slot was held")
    else:
        lines.append("slots held: the turn was aborted while its request waited for one")
        said = ask(p.AbortRequest())
        lines.append("abort ok" if said["type"] == "ok" else f"abort refused {said['kind']}")
    try:
        while agent.task is not None:
            await asyncio.shield(agent.task)
    finally:
        for fd in held:
            os.close(fd)


async def _serve(server: _Recording, agent_dir: Path, work: Path, session: Any, events: Sequence[Event], lines: list[str]) -> None:
    """The scenario through the agent process: a ``Daemon`` with the session runner, each request
    as a client sends it. The goal and the autonomous layer have no request of their own (the
    Director stack takes them from the session's documents), so they are set on the session the
    agent holds."""
    from eukhe.directors.hooks import DirectorLimits, Directors

    agent = daemon.Daemon(agent_dir, session, runner_factory, project_dir=work)
    client = _Client(_Printer(lines, server))
    agent.clients.add(cast(Any, client))
    runner: Any = agent.runner

    def compacting() -> bool:
        compaction = runner.compaction
        return compaction is not None and compaction.task is not None

    def ask(request: p.Request) -> dict[str, Any]:
        client.replies.clear()
        agent._line(cast(Any, client), p.encode(request).rstrip(b"\n"))
        return client.replies[-1]

    def agent_command(spawn: dict[str, Any]) -> None:
        """``/agent NAME TASK``, the child given its replies, and its line."""
        name = str(spawn["name"])
        with server._settle:
            running = name in server.started and name not in server.ended
        if not running:  # a name that runs already is refused: its replies stay
            server.children[name] = [script_of(r, hang=server.hang) for r in spawn.get("replies", [])]
        reply = ask(p.CommandRequest(line=f"/agent {name} {spawn['task']}"))
        if reply["type"] == "error":
            lines.append(f"agent {name} refused {reply['kind']}")
        else:
            lines.append(f"agent {name} started")
            with server._settle:
                server.started.append(name)

    async def start_child(spawn: dict[str, Any]) -> None:
        """``/agent`` while a turn runs: the child to its end (its report delivered to the run)."""
        agent_command(spawn)
        while runner.subagent_jobs():
            await asyncio.gather(*runner.subagent_jobs(), return_exceptions=True)

    setup = next((dict(e["setup"]) for e in events if "setup" in e), {})
    asked_turn = False
    stopped = False  # the agent has ended: nothing more is served
    try:
        for number, event in enumerate(events):
            if stopped:
                break
            if "setup" in event:
                sets = [f"set {SETUP_CVARS[k]} {v}" for k, v in dict(event["setup"]).items() if k in SETUP_CVARS]
                title = dict(event["setup"]).get("title_reply")
                server.title = None if title is None else script_of(dict(title))
                server.title_requests = 0
                client.printer.limit = int(dict(event["setup"]).get("max_subagents", client.printer.limit))
                background = dict(event["setup"]).get("compaction") == "background"
                server.summary_gate = threading.Event() if background else None
                if sets:
                    ask(p.cvar_request("; ".join(sets)))
            elif "goal" in event:
                Directors(agent.main, DirectorLimits.of(agent.cvar.value)).set_goal(str(event["goal"]["objective"]), str(event["goal"]["id"]))
                lines.append(f"goal {event['goal']['id']}")
            elif "autonomous" in event:
                Directors(agent.main, DirectorLimits.of(agent.cvar.value)).set_autonomous(event["autonomous"] is True)
                lines.append(f"autonomous {'on' if event['autonomous'] is True else 'off'}")
            elif "remind" in event:
                reply = ask(p.CommandRequest(line=f"/remind {event['remind']}"))
                lines.append(f"remind {'refused' if reply['type'] == 'error' else 'pushed'}")
            elif "force" in event:
                force = event["force"]
                reply = ask(p.CommandRequest(line=f"/force {force['tool']} --tries {int(force['tries'])}"))
                lines.append(f"force {force['tool']} {'refused' if reply['type'] == 'error' else 'pushed'}")
            elif "spawn_line" in event:
                lines.append(await spawn_child(event["spawn_line"], work))
            elif "model" in event:  # /model, an id its provider does not list
                reply = ask(p.CommandRequest(line=f"/model {event['model']}"))
                lines.append(f"model {event['model']}" if reply["type"] == "ok" else f"model refused {reply['kind']}")
            elif "agent" in event:
                agent_command(dict(event["agent"]))
                if dict(event["agent"]).get("rewind") is True and lines[-1].endswith(" started"):  # while it runs
                    lines.append(rewind_line(ask(p.CommandRequest(line="/rewind 1"))))
                if dict(event["agent"]).get("wait") is False:  # left running
                    continue
                if number + 1 == len(events) or "agent" not in events[number + 1]:
                    # the children started together, to their reports
                    while runner.subagent_jobs():
                        await asyncio.gather(*runner.subagent_jobs(), return_exceptions=True)
                    server.drop_scripts()
            elif "input" in event:
                lines.append(f"input {event['input']}")
                held = hold_slots(agent_dir) if setup.get("slots_held") and not asked_turn else None
                asked_turn = True
                scripts: list[Any] = []
                gates: list[tuple[int, threading.Event, list[dict[str, Any]], list[p.SteerRequest | p.FollowUpRequest], dict[str, Any]]] = []
                for index, reply in enumerate(event.get("replies", [])):
                    sent: list[p.SteerRequest | p.FollowUpRequest] = [*(p.SteerRequest(text=t) for t in reply.get("steer", [])), *(p.FollowUpRequest(text=t) for t in reply.get("follow_up", []))]
                    spawns = [dict(a) for a in reply.get("agents", [])]
                    gate = threading.Event() if sent or spawns or reply.get("busy") or reply.get("abort") or reply.get("rewind") or reply.get("stop_agent") or reply.get("break_stack") else None
                    scripts.append(script_of(reply, gate))
                    if gate is not None:
                        gates.append((index, gate, spawns, sent, reply))
                server.script(*scripts)
                server.summaries = [dict(s) for s in event.get("summaries", [])]
                server.hang = threading.Event()
                server.children = {str(n): [script_of(r, hang=server.hang) for r in rs] for n, rs in dict(event.get("children", {})).items()}
                server.compacting = compacting
                server.lines = lines
                try:
                    ask(p.TurnRequest(text=str(event["input"])))
                    early = dict(event.get("early", {}))  # sent as the turn starts: before its run has begun
                    for text in early.get("steer", []):
                        ask(p.SteerRequest(text=str(text)))
                    for text in early.get("follow_up", []):
                        ask(p.FollowUpRequest(text=str(text)))
                    if early.get("abort") is True:
                        said = ask(p.AbortRequest())
                        lines.append("abort ok" if said["type"] == "ok" else f"abort refused {said['kind']}")
                    if held is not None and setup.get("slots_held") == "abort":  # aborted while it waits
                        await abort_when_waited(held, server, agent, ask, lines)
                    elif held is not None:  # every slot of the provider taken: the turn's request waits for one
                        lines.append(await release_when_waited(held, server))
                    for index, gate, spawns, sent, reply in gates:
                        # the request that plays reply ``index`` comes (it waits at the gate), or
                        # the turn ends without it
                        while len(server.requests) <= index and agent.task is not None:
                            await asyncio.sleep(0.001)
                        if len(server.requests) > index:
                            for spawn in spawns:  # each child to its report, which waits to join the run
                                await start_child(spawn)
                            for request in sent:
                                ask(request)
                            if reply.get("busy"):  # a second turn while this one runs
                                said = ask(p.TurnRequest(text="another turn"))
                                lines.append(f"turn refused {said['kind']}" if said["type"] == "error" else "turn started")
                            if reply.get("rewind"):  # a branch move while the turn runs
                                lines.append(rewind_line(ask(p.CommandRequest(line="/rewind 1"))))
                            if reply.get("abort"):
                                said = ask(p.AbortRequest())
                                lines.append("abort ok" if said["type"] == "ok" else f"abort refused {said['kind']}")
                            if reply.get("break_stack"):  # main's Director stack document, damaged
                                agent.main.commit(documents={DIRECTORS_DOC: BROKEN_STACK})
                            if reply.get("stop_agent"):  # the agent process stops (its end, as SIGTERM brings it)
                                lines.append("agent stops")
                                await agent.close()
                                server.hang.set()  # a request of a child it killed is let go: nobody reads it
                                stopped = True
                        gate.set()  # (after an abort the run is cancelled before it reads another byte)
                    while agent.task is not None:
                        await asyncio.shield(agent.task)
                finally:
                    server.lines = None
                    server.compacting = None
                    server.drop_scripts()
        if runner.titling is not None:  # the title, in the background all along, to its end
            await runner.titling
        if "titles" in setup:
            shown = json.dumps(client.printer.titles[-1], ensure_ascii=False) if client.printer.titles else "-"
            lines.append(f"title requests={server.title_requests} rows={len(client.printer.titles)} title={shown}")
    finally:
        server.title = None
        server.summary_gate = None
        agent.clients.clear()
        await agent.close()


# -- the generator ---------------------------------------------------------------------------------


def call(rng: random.Random, pool: Sequence[tuple[str, str, str, str]] = POOL) -> dict[str, str]:
    name, args, act, kind = rng.choice(pool)
    return {"name": name, "args": args, "act": act, "kind": kind}


def answer(rng: random.Random) -> dict[str, Any]:
    return {"text": rng.choice(["Done.", "The file says alpha.", "All checked.", "Nothing to change."])}


def tools_reply(rng: random.Random, n: int = 0) -> dict[str, Any]:
    calls = [call(rng) for _ in range(n or rng.choice([1, 1, 1, 2, 3]))]
    reply: dict[str, Any] = {"calls": calls, "stop": "toolUse"}
    if rng.random() < 0.3:
        reply["text"] = "Let me look."
    return reply


def reply_of_kind(rng: random.Random, kind: str, forced: str = "") -> dict[str, Any]:
    if kind == "answer":
        return answer(rng)
    if kind == "tools":
        return tools_reply(rng)
    if kind == "forced_call":
        return {"calls": [call(rng, [entry for entry in POOL if entry[0] == forced])], "stop": "toolUse"}
    if kind in ("fail", "cut", "loop"):
        return {"fault": kind}
    if kind == "empty":
        return {"stop": rng.choice(["stop", "toolUse"])}
    if kind == "length_empty":
        return {"stop": "length"}
    if kind == "length_calls":
        return {"calls": [call(rng)], "stop": "length"}
    if kind == "refusal":
        return {"text": rng.choice(["", "", "I can't help with that part."]), "stop": "refusal"}
    if kind == "leak":
        return {"text": "Calling:", "leaks": [call(rng, LEAK_POOL[:2])]}
    if kind == "bad_leak":
        return {"text": "Calling:", "leaks": [call(rng, LEAK_POOL)]}
    raise ValueError(kind)


NOTED = ("empty", "loop", "cut", "length_empty")  # each a note, never an answer or a call
KINDS = ("answer", "tools", "tools", "fail", "cut", "loop", "empty", "length_empty", "length_calls", "leak", "bad_leak")

# Each aim: the setup it wants and a builder of its directing events and replies.
AIMS = (
    "goal_completes",
    "goal_stalls",
    "reminder",
    "forced_missed",
    "forced_called",
    "loop_note",
    "leak",
    "broken_arguments",
    "retry_429",
    "max_notes",
    "max_tool_rounds",
    "autonomous",
    "no_step",
    "full_stack",
    "refusal",
    "steering",
    "compaction",
    "compaction",
    "subagents",
    "random",
    "random",
)
TITLE_REPLIES = (
    {"text": "Checking the files"},
    {"text": '\n"Fix the failing tests"\nThen more.'},
    {"text": "Title: **Review a.txt**"},
    {"text": "title: `ls`"},
    {"text": "x" * 100},
    {"text": "  \n"},
    {"fault": "fail"},
)
KEEP = 7  # compaction.keepRecentTokens of the compaction scenarios: the estimate of their inputs
SUMMARIES = ({"text": "The user asked for the files; a.txt was read."}, {"text": "Files were listed and read."}, {"fault": "fail"}, {"text": ""})


def child_script(rng: random.Random) -> list[dict[str, Any]]:
    """A child's replies: tool rounds, then an answer or a refusal (or the default answer)."""
    script = [tools_reply(rng) for _ in range(rng.choice([0, 1, 1, 2]))]
    return script + [rng.choice([answer(rng), answer(rng), reply_of_kind(rng, "refusal")])][: rng.choice([1, 1, 1, 0])]


def replies(rng: random.Random, count: int, kinds: Sequence[str] = KINDS) -> list[dict[str, Any]]:
    return [reply_of_kind(rng, rng.choice(kinds)) for _ in range(count)]


# The chat's scenarios (CHAT_FIRST on): the session is the chat, which answers from its view. Each
# call's result is one line of the chat's log, whatever its text, so any call does; zoom and date
# are the chat's own tools (memory.md rules 52-56), on the user's message (the log's first line).
CHAT_FIRST = 300
CHAT_POOL: tuple[tuple[str, str, str, str], ...] = (
    ("read", '{"path": "a.txt"}', "read-a", "ok"),
    ("ls", '{"path": "src"}', "ls-src", "ok"),
    ("grep", '{"pattern": "alpha"}', "grep-alpha", "ok"),
    ("read", '{"path": "missing.txt"}', "read-missing", "not_found"),
    ("glob", '{"pattern": "*.txt"}', "glob-txt", "ok"),
)
MEMORY_CALLS: tuple[tuple[str, str, str, str], ...] = (
    ("zoom", '{"id": 1}', "zoom-1", "ok"),
    ("date", '{"id": 1}', "date-1", "ok"),
)
CHAT_SHAPES = ("answer", "tools", "memory", "task", "task_after_tools", "background", "two_inputs", "background_then_task", "refusal")


def task_call(name: str, task: str) -> dict[str, Any]:
    args = {"task": task} if name == "" else {"name": name, "task": task}
    return {"name": "task", "args": json.dumps(args), "act": f"task-{name or 'agent1'}-{task}", "kind": "ok", "agent": name, "task": task}


def chat_scenario(index: int) -> list[Event]:
    """A scenario of the chat: one shape of CHAT_SHAPES, its texts and calls drawn from its index."""
    rng = random.Random(f"agent-chat-{index}")
    shape = CHAT_SHAPES[(index - CHAT_FIRST) % len(CHAT_SHAPES)]
    events: list[Event] = [{"setup": {"chat": True, "max_subagents": 2}}]

    def tools(text: bool = True) -> dict[str, Any]:
        reply: dict[str, Any] = {"calls": [call(rng, CHAT_POOL) for _ in range(rng.choice([1, 2]))], "stop": "toolUse"}
        if text:
            reply["text"] = "Let me look."
        return reply

    children: dict[str, list[dict[str, Any]]] = {}
    script: list[dict[str, Any]] = []
    if shape == "answer":
        script = [answer(rng)]
    elif shape == "tools":
        script = [tools(rng.random() < 0.5) for _ in range(rng.choice([1, 2]))] + [answer(rng)]
    elif shape == "memory":
        script = [{"calls": [call(rng, MEMORY_CALLS[:1]), call(rng, MEMORY_CALLS[1:])], "stop": "toolUse"}, answer(rng)]
    elif shape in ("task", "task_after_tools"):
        name = rng.choice(["scout", ""])
        first = [tools(True)] if shape == "task_after_tools" else []
        task = {"calls": [task_call(name, f"look over {rng.choice(['a.txt', 'b.txt'])}"), *([call(rng, CHAT_POOL)] if first else [])], "stop": "toolUse"}
        if first:
            task["text"] = "Now a helper."
        script = [*first, task, answer(rng)]
        children[name or "agent1"] = [tools(False), answer(rng)]
    elif shape in ("background", "background_then_task"):
        for name in ("bg", "bg2")[: rng.choice([1, 2])]:
            events.append({"agent": {"name": name, "task": f"count the files ({name})", "replies": [answer(rng)]}})
        script = [answer(rng)]
        if shape == "background_then_task":
            script = [{"calls": [task_call("", "check b.txt")], "stop": "toolUse"}, answer(rng)]
            children["agent1"] = [answer(rng)]
    elif shape == "refusal":  # its row is the session's alone: the chat logs no line of it
        script = [tools(False), {"text": "", "stop": "refusal"}]
    elif shape == "two_inputs":
        events.append({"input": f"first of chat {index}", "replies": [tools(True), answer(rng)]})
        script = [answer(rng)]
    events.append({"input": f"chat {index}", "replies": script, "children": children})
    return events


# The stalls (STALL_FIRST on): a task's child whose request hangs sends nothing for subagentStallMs
# (STALL_MS, well past the time a child takes between two lines, even on a loaded machine) and is
# killed; the run goes on.
STALL_FIRST = CHAT_FIRST + len(CHAT_SHAPES)
STALLS = 2
STALL_MS = 5000


def stall_scenario(index: int) -> list[Event]:
    rng = random.Random(f"agent-stall-{index}")
    first = [tools_reply(rng)] if index % 2 else []  # a tool round first: the stall is timed from its last line
    children = {"slow": [*first, {"fault": "hang"}], "agent1": [answer(rng)]}
    script = [{"calls": [task_call("slow", "wait for the build")], "stop": "toolUse"}, {"calls": [task_call("", "read a.txt")], "stop": "toolUse"}, answer(rng)]
    return [{"setup": {"stall_ms": STALL_MS}}, {"input": f"stall {index}", "replies": script, "children": children}]


# The kills (KILL_FIRST on): a child whose bash call kills its own process, by a task call or by
# /agent, whose agents/NAME.cfg does not parse; then a turn aborted while its first request waits
# for a slot (SLOT_ABORT_FIRST on), and a next turn.
KILL_FIRST = STALL_FIRST + STALLS
KILLS = 2
STOP_FIRST = KILL_FIRST + KILLS
UNRESOLVED_FIRST = STOP_FIRST + 1
UNRESOLVED_MODEL = "xai/grok-4.6"  # of the compiled catalog; the agent dir holds no credentials of xai
NO_KEY = "XAI_API_KEY"  # its provider's variable
UNRESOLVED_MAP = {"off": None, "minimal": "minimal", "xhigh": "xhigh"}  # its thinkingLevelMap there
SLOT_ABORT_FIRST = UNRESOLVED_FIRST + 1
SLOT_ABORTS = 1
# The damaged stacks (BROKEN_STACK_FIRST on): main's Director stack document replaced, while a reply's
# request runs, by one that does not parse; the turn fails at the next read of the stack, and so do
# the pushes and the turns after it.
BROKEN_STACK_FIRST = SLOT_ABORT_FIRST + SLOT_ABORTS
BROKEN_STACKS = 2
BROKEN_STACK = {"layers": "not a list", "version": 1}


SPAWN_FIRST = BROKEN_STACK_FIRST + BROKEN_STACKS
SPAWN_LINES: list[object] = ["not json", "[1, 2]", {"name": "helper", "task": "look", "parent": 1}]  # pid 1 is never the bridge


def fixed(entry: tuple[str, str, str, str]) -> dict[str, str]:
    name, args, act, kind = entry
    return {"name": name, "args": args, "act": act, "kind": kind}


def kill_scenario(index: int) -> list[Event]:
    rng = random.Random(f"agent-kill-{index}")
    dying = [{"thinking": list(THINKING[1]), "calls": [fixed(KILL_CALL)], "stop": "toolUse"}]
    first: dict[str, Any] = {"calls": [fixed(entry) for entry in FIFO_CALLS], "stop": "toolUse"}
    helping = [{"thinking": list(THINKING[2]), "text": "All checked."}]  # its profile does not parse: it runs all the same
    setup: Event = {"setup": {"broken_cfg": ["doomed", "helper"]}}
    if index % 2 == 0:  # the task call's child
        first["rewind"] = True  # sent while the request runs: refused busy
        calls = [task_call("doomed", "build the project"), task_call("helper", "check the build")]
        script = [first, {"thinking": list(THINKING[0]), "calls": calls, "stop": "toolUse"}, answer(rng)]
        return [setup, {"input": f"kill {index}", "replies": script, "children": {"doomed": dying, "helper": helping}}]
    spawns = [{"agent": {"name": name, "task": f"{name}: build the project", "replies": replies}} for name, replies in (("doomed", dying), ("helper", helping))]
    return [setup, *spawns, {"input": f"kill {index}", "replies": [first, answer(rng)]}]


def stop_scenario(index: int) -> list[Event]:
    """The agent stops while a turn's request runs and a background child waits for its reply."""
    rng = random.Random(f"agent-stop-{index}")
    slow = {"agent": {"name": "slow", "task": "wait for the build", "replies": [{"fault": "hang"}], "wait": False}}
    return [{"setup": {}}, slow, {"input": f"stop {index}", "replies": [{**answer(rng), "stop_agent": True}]}, {"input": "never served", "replies": []}]


def unresolved_scenario(index: int) -> list[Event]:
    """The session pinned to a model its provider does not list: a child of /agent (whose
    agents/NAME.cfg does not parse) and a turn cannot resolve it."""
    spawn = {"agent": {"name": "helper", "task": f"look over a.txt ({index})", "replies": [], "rewind": True}}
    return [{"setup": {"broken_cfg": ["helper"]}}, {"model": UNRESOLVED_MODEL, "map": dict(UNRESOLVED_MAP)}, spawn, {"input": f"hello {index}", "replies": []}]


def slot_abort_scenario(index: int) -> list[Event]:
    rng = random.Random(f"agent-slot-abort-{index}")
    return [{"setup": {"slots_held": "abort"}}, {"input": f"slow start {index}", "replies": []}, {"input": f"then go on {index}", "replies": [tools_reply(rng), answer(rng)]}]


def broken_stack_scenario(index: int) -> list[Event]:
    rng = random.Random(f"agent-broken-stack-{index}")
    if index % 2 == 0:  # a reminder on the stack; the stack breaks during the answer's request
        script = [tools_reply(rng), {**answer(rng), "break_stack": True}]
        return [{"setup": {}}, {"remind": "Keep the diff small."}, {"input": f"damaged {index}", "replies": script}, {"remind": "Run the tests."}, {"input": f"again {index}", "replies": [answer(rng)]}]
    script = [{**tools_reply(rng), "break_stack": True, "follow_up": [f"then sum up ({index})"]}, answer(rng)]  # the calls run, then the next request's read fails
    return [{"setup": {}}, {"input": f"damaged {index}", "replies": script}, {"force": {"tool": "ls", "tries": 1}}, {"input": f"again {index}", "replies": [answer(rng)]}]


def with_thinking(index: int, events: list[Event]) -> list[Event]:
    """Some scenarios' replies (and their children's) stream reasoning before their text or calls
    (drawn apart, so the other draws stay as they were)."""
    rng = random.Random(f"agent-thinking-{index}")
    if rng.random() >= 0.2:
        return events
    for event in events:
        groups = [event.get("replies", [])] + list(dict(event.get("children", {})).values())
        for reply in (r for group in groups for r in group):
            if reply.get("fault", "") == "" and (reply.get("text") or reply.get("calls")) and not reply.get("abort") and rng.random() < 0.5:
                reply["thinking"] = list(rng.choice(THINKING))
    return events


def generate(index: int) -> list[Event]:
    if index >= SPAWN_FIRST:
        return [{"setup": {}}, *({"spawn_line": line} for line in SPAWN_LINES)]
    if index >= BROKEN_STACK_FIRST:
        return broken_stack_scenario(index)
    if index >= SLOT_ABORT_FIRST:
        return slot_abort_scenario(index)
    if index >= UNRESOLVED_FIRST:
        return unresolved_scenario(index)
    if index >= STOP_FIRST:
        return stop_scenario(index)
    if index >= KILL_FIRST:
        return kill_scenario(index)
    return with_thinking(index, scenario(index))


def scenario(index: int) -> list[Event]:
    if index >= STALL_FIRST:
        return stall_scenario(index)
    if index >= CHAT_FIRST:
        return chat_scenario(index)
    rng = random.Random(f"agent-{index}")
    aim = AIMS[index % len(AIMS)]
    setup: dict[str, Any] = {
        "max_steps": rng.choice([200, 200, 3, 1, 0]),
        "stack_cap": rng.choice([8, 8, 2, 1]),
        "stall_steps": rng.choice([3, 3, 2, 1, 0]),
        "max_continuations": rng.choice([20, 2, 1]),
        "max_tool_rounds": rng.choice([50, 50, 2, 1]),
        "max_retries": rng.choice([3, 3, 1, 0]),
    }
    events: list[Event] = [{"setup": setup}]
    inputs = rng.choice([2, 3, 3]) if aim == "compaction" else rng.choice([1, 1, 2, 3])
    for k in range(inputs):
        summaries: list[dict[str, Any]] = []
        early_sent: dict[str, Any] = {}  # sent as the turn starts (the steering aim)
        if aim in ("goal_completes", "goal_stalls") and k == 0:
            events.append({"goal": {"id": f"g{index}", "objective": "make the tests pass"}})
        if aim == "goal_completes":
            work = [tools_reply(rng) for _ in range(rng.randint(1, 3))]
            script = [r for w in work for r in (w, answer(rng))]
        elif aim == "goal_stalls":
            script = [answer(rng) for _ in range(rng.randint(2, 6))]
        elif aim == "reminder":
            events.append({"remind": "Run the tests before you answer."})
            if rng.random() < 0.5:
                events.append({"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}})
            script = replies(rng, rng.randint(1, 5), ("answer", "tools"))
        elif aim in ("forced_missed", "forced_called"):
            events.append({"force": {"tool": rng.choice(["read", "ls"]), "tries": rng.choice([0, 1, 2])}})
            tool = events[-1]["force"]["tool"]
            kinds = ("answer", "tools", "empty") if aim == "forced_missed" else ("forced_call", "answer", "tools")
            script = [reply_of_kind(rng, rng.choice(kinds), tool) for _ in range(rng.randint(1, 5))]
        elif aim == "loop_note":
            script = replies(rng, rng.randint(1, 4), ("loop", "cut", "answer"))
        elif aim == "leak":
            script = replies(rng, rng.randint(1, 5), ("leak", "bad_leak", "answer", "length_calls"))
        elif aim == "broken_arguments":
            script = [tools_reply(rng, rng.randint(1, 3)) for _ in range(rng.randint(1, 3))] + [answer(rng)]
            if rng.random() < 0.6:  # a command's output past the cap, its exit, a job left behind, the budget
                bash: dict[str, Any] = call(rng, BASH_POOL)
                if bash["act"] in SEQ_OUTPUT:
                    bash["seq"], bash["exit"] = SEQ_OUTPUT[bash["act"]]
                if bash["act"] == "bash-over-budget":
                    setup["tool_budget"] = TOOL_BUDGET_MS
                script.insert(0, {"calls": [bash], "stop": "toolUse"})  # the first request's: always reached
            # two of the tools' fault paths in the first request (their own draws: the others' stay)
            extra = random.Random(f"agent-extra-{index}-{k}")
            script[0]["calls"] = list(script[0]["calls"]) + [call(extra, EXTRA_POOL) for _ in range(2)]
            if extra.random() < 0.35:  # an edit of a file holding a NUL byte: refused before any change
                script[0]["calls"].append(call(extra, (EDIT_BINARY,)))
        elif aim == "retry_429":
            script = replies(rng, rng.randint(1, 5), ("fail", "fail", "answer", "tools"))
        elif aim == "max_notes":
            script = replies(rng, rng.randint(8, 11), ("empty", "loop", "cut", "length_empty", "bad_leak"))
            if k == 0 and (index // len(AIMS)) % 2 == 0:  # every note spent, then markup that leaks: it answers as text
                spent = random.Random(f"agent-spent-{index}")
                script[:9] = replies(spent, 8, NOTED) + [reply_of_kind(spent, "bad_leak")]
        elif aim == "max_tool_rounds":
            setup["max_tool_rounds"] = rng.choice([0, 1, 2])
            script = [tools_reply(rng) for _ in range(rng.randint(1, 4))] + [answer(rng)]
        elif aim == "autonomous":
            events.append({"autonomous": rng.random() < 0.8})
            script = replies(rng, rng.randint(1, 5), ("answer", "tools", "empty"))
        elif aim == "no_step":
            setup["max_steps"] = rng.choice([0, 1])
            events.append({"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}} if rng.random() < 0.6 else {"autonomous": True})
            script = replies(rng, rng.randint(1, 4), ("answer", "tools"))
        elif aim == "refusal":
            if rng.random() < 0.5:
                events.append(rng.choice([{"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}}, {"force": {"tool": "ls", "tries": 1}}]))
            script = replies(rng, rng.randint(1, 3), ("refusal", "answer", "tools"))
        elif aim == "steering":
            if k == 0:
                setup["steering_mode"] = rng.choice(["one-at-a-time", "all"])
                setup["follow_up_mode"] = rng.choice(["one-at-a-time", "all"])
            script = replies(rng, rng.randint(1, 5), ("answer", "tools", "tools", "cut", "empty", "refusal"))
            for number, reply in enumerate(script):
                if rng.random() < 0.6:
                    reply["steer"] = [f"also look at {rng.choice(list(FILES))} ({k}.{number}.{j})" for j in range(rng.choice([1, 1, 2]))]
                if rng.random() < 0.3:
                    reply["follow_up"] = [f"then sum up ({k}.{number}.{j})" for j in range(rng.choice([1, 2]))]
            early = random.Random(f"agent-early-{index}-{k}")  # its own draws: the others stay as they were
            if early.random() < 0.6:  # messages, or an abort, sent as the turn starts (before its run begins)
                shape = early.choice(["steer", "steer", "follow_up", "both", "abort", "abort"])
                sent: dict[str, Any] = {}
                if shape in ("steer", "both", "abort") and early.random() < 0.7:
                    sent["steer"] = [f"first look at {early.choice(list(FILES))} ({k}.early.{j})" for j in range(early.choice([1, 1, 2]))]
                if shape in ("follow_up", "both"):
                    sent["follow_up"] = [f"then list the files ({k}.early)"]
                if shape == "abort":
                    sent["abort"] = True
                early_sent = sent
        elif aim == "compaction":
            if k == 0:
                setup["compaction"] = rng.choice(["background", "background", "blocking"])
                setup["keep_recent"] = KEEP
            if rng.random() < 0.25:
                events.append({"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}})
            script = replies(rng, rng.randint(1, 5), ("answer", "tools", "tools", "cut", "fail", "empty", "leak"))
            for number, reply in enumerate(script):
                if rng.random() < 0.25:
                    reply["steer"] = [f"also look at {rng.choice(list(FILES))} ({k}.{number}.{j})" for j in range(rng.choice([1, 1, 2]))]
                if rng.random() < 0.15:
                    reply["follow_up"] = [f"then sum up the work ({k}.{number})"]
            summaries = [dict(rng.choice(SUMMARIES)) for _ in range(rng.randint(0, 3))]
        elif aim == "subagents":
            if k == 0:
                setup["max_subagents"] = rng.choice([1, 2, 2, 0])
            children: dict[str, list[dict[str, Any]]] = {}
            if rng.random() < 0.6:
                for _ in range(rng.choice([1, 2, 2, 3])):
                    name = rng.choice(["scout", "helper", "tester"])
                    events.append({"agent": {"name": name, "task": f"check {rng.choice(list(FILES))} ({k})", "replies": child_script(rng)}})
            script = []
            for number in range(rng.randint(1, 2)):
                name = rng.choice(["scout", "helper", ""])
                task = f"read {rng.choice(list(FILES))} and report ({k})"
                blank = number == 0 and k == 0 and (index // len(AIMS)) % 4 == 1  # a task of blanks: refused, no child
                task = "   " if blank else task
                args = {"task": task} if name == "" else {"name": name, "task": task}
                act = f"task-{name or 'agent1'}-{task}"
                kind = "subagent_failed" if blank else "ok"
                script.append({"calls": [{"name": "task", "args": json.dumps(args), "act": act, "kind": kind, "agent": name, "task": task}], "stop": "toolUse"})
                replies_of_child = child_script(rng)
                if not blank:
                    children.setdefault(name or "agent1", []).extend(replies_of_child)
            script.append(answer(rng))
            if rng.random() < 0.5:  # /agent while a request runs: its report joins the run
                joining = rng.choice(script)
                joining["agents"] = [
                    {"name": rng.choice(["watch", "probe", "9bad"]), "task": f"look over {rng.choice(list(FILES))} ({k})", "replies": child_script(rng)}
                    for _ in range(rng.choice([1, 1, 2]))
                ]
                if rng.random() < 0.5:  # and a steered message: the reports join before it
                    joining["steer"] = [f"also check {rng.choice(list(FILES))} ({k})"]
            events.append({"input": f"task {k} of scenario {index}", "replies": script, "children": children})
            continue
        elif aim == "full_stack":
            for _ in range(rng.randint(1, 4)):
                events.append(rng.choice([{"remind": "Keep the diff small."}, {"force": {"tool": "ls", "tries": 1}}]))
            script = replies(rng, rng.randint(1, 5))
        else:
            for _ in range(rng.randint(0, 2)):
                events.append(
                    rng.choice(
                        [
                            {"goal": {"id": f"g{index}-{k}", "objective": f"finish task {k}"}},
                            {"remind": "Note what you changed."},
                            {"force": {"tool": rng.choice(["read", "grep"]), "tries": rng.randint(0, 2)}},
                            {"autonomous": rng.random() < 0.5},
                        ]
                    )
                )
            script = replies(rng, rng.randint(0, 7))
            if k == 0 and rng.random() < 0.5:  # the session's title from its first message (S9)
                setup["titles"] = rng.choice(["on", "on", "on", "named"])
                setup["title_reply"] = dict(rng.choice(TITLE_REPLIES))
            elif k == 0 and rng.random() < 0.5:  # every slot of the provider held elsewhere (S4b.4)
                setup["slots_held"] = True
            if script and rng.random() < 0.4:  # a second turn, or an abort, while a request runs
                target = rng.choice(script)
                if target.get("fault") != "fail":
                    target[rng.choice(["busy", "abort", "abort"])] = True
        if aim == "compaction":
            events.append({"input": f"task {k} of scenario {index:04d}", "replies": script, "summaries": summaries})
        else:
            events.append({"input": f"task {k} of scenario {index}", "replies": script, **({"early": early_sent} if early_sent else {})})
    if aim == "max_notes" and (index // len(AIMS)) % 2 == 0:  # a next run: its request shows what the spent run kept
        events.append({"input": f"and then? (scenario {index})", "replies": [answer(random.Random(f"agent-spent-after-{index}"))]})
    return events


# -- the cases a scenario reaches (read from the model's transcript and the events) ------------------


def reached(events: Sequence[Event]) -> set[str]:
    lines = model_transcript([dict(e) for e in events])
    text = "\n".join(lines)
    found: set[str] = set()
    inputs = [e for e in events if "input" in e]
    checks = {
        "goal_completes": any(line.startswith("step continue again goal:again") for line in lines) and "end answered" in text,
        "goal_pauses_at_stall_cap": "Goal paused." in text,
        "reminder_joins_continuation": "reminder:leave" in text and "step continue" in text,
        "reminder_waits": "reminder:defer" in text,
        "forced_called": any("forced=" in line and "/" in line for line in lines) and "forced:leave" in text,
        "forced_native_retry": "/native" in text,
        "forced_not_called": "end not_called" in text,
        "goal_note_under_cap": "Progress check:" in text,
        "autonomous_continues": "autonomous:again" in text,
        "autonomous_limit": "autonomous:yield" in text,
        "push_refused": " refused" in text,
        "note_loop": "note loop" in text,
        "note_cut": "note cut" in text,
        "note_no_answer": "note no_answer" in text,
        "note_length": "note length" in text,
        "note_leak": "note leak" in text,
        "max_notes": "end max_notes" in text or "note no_answer 8/8" in text or "note length 8/8" in text,
        "leak_rebuilt": "rebuilt" in text,
        "truncated_calls": " truncated" in text,
        "tool_unavailable": "tool_unavailable" in text,
        "invalid_arguments": "invalid_arguments" in text,
        "retry_429": "retry 1/" in text,
        "retries_exhausted": "end failed" in text and "retry" in text,
        "max_tool_rounds": "end max_tool_rounds" in text,
        "refused": "end refused" in text,
        "no_step": "no_step" in text,
        "model_error": "model_error" in text,
        "no_layer": "step yield none -" in text,
        "several_inputs": len(inputs) > 1,
        "default_reply": any(len(lines) and len(e.get("replies", [])) == 0 for e in inputs),
        "steer_joins": "row joined: " in text,
        "steer_joins_as_one": any(line.startswith("row joined: ") and "\\n\\n" in line for line in lines),
        "steer_runs_next": any(a.startswith("end ") and a != "end answered" and b.startswith("request ") for a, b in zip(lines, lines[1:])),
        "follow_up_runs": sum(line.startswith("end ") for line in lines) > len(inputs) and any(r.get("follow_up") for e in inputs for r in e.get("replies", [])),
    }
    found.update(name for name, hit in checks.items() if hit)
    if spent_leak_answers(inputs, lines):
        found.add("notes_spent_leak_answers")
    found.update(compaction_cases(events, lines))
    setup = next((dict(e["setup"]) for e in events if "setup" in e), {})
    subagents = {
        "task_report": any(line.startswith("call task ok [") for line in lines),
        "task_default_name": "call task ok [agent1]" in text,
        "task_child_failed": "call task subagent_failed" in text,
        "task_child_stalled": "call task stalled" in text,
        "task_no_slots": "call task no_slots" in text,
        "task_blank_refused": any(c.get("name") == "task" and not str(c.get("task", "x")).strip() for e in inputs for r in e.get("replies", []) for c in r.get("calls", []))
        and "call task subagent_failed" in text,
        "agent_report": any(line.startswith("row subagent: [") for line in lines),
        "agent_waits_for_slot": "waits for a slot" in text,
        "agent_concurrent": setup.get("max_subagents", 4) >= 2
        and any(a.endswith(" started") and b.endswith(" started") and a.startswith("agent ") and b.startswith("agent ") for a, b in zip(lines, lines[1:])),
        "agent_busy": "refused agent_busy" in text,
        "agent_no_slots": "refused no_slots" in text,
        "agent_invalid_name": "refused invalid_name" in text,
        # an /agent sent while a request runs: the child starts before that request's reply
        "agent_report_joins_run": any(a.startswith("request ") and b.startswith("agent ") and b.endswith(" started") for a, b in zip(lines, lines[1:])),
    }
    found.update(name for name, hit in subagents.items() if hit)
    calls = [c for e in inputs for r in e.get("replies", []) for c in r.get("calls", [])]
    if any(c["act"] in ("read-b-trailing-comma", "read-c-single-quotes") for c in calls):
        found.add("repaired_arguments")
    if any(len(r.get("calls", [])) > 1 for e in inputs for r in e.get("replies", [])):
        found.add("parallel_calls")
    bash = {
        "bash-large": "bash_output_past_cap",
        "bash-large-exit": "bash_output_past_cap",
        "bash-mid": "bash_output_between_caps",
        "bash-background": "bash_job_left_running",
        "bash-not-utf8": "bash_not_utf8",
        "bash-over-budget": "bash_timeout_past_budget",
    }
    found.update(bash[c["act"]] for c in calls if c["act"] in bash)
    extras = {
        "read-lone-surrogate": ("argument_not_utf8", "call read invalid_arguments"),
        "read-name-too-long": ("tool_io_error", "call read io_error"),
        "ls-name-too-long": ("tool_io_error", "call ls io_error"),
        "edit-grow": ("edit_applied", "call edit ok"),
        "edit-grow-all": ("edit_applied", "call edit ok"),
        "write-new": ("write_new_file", "call write ok"),
        "grep-over-links": ("grep_over_links", "call grep ok"),
        "grep-dangling-link": ("grep_over_links", "call grep not_found"),
        "edit-binary": ("edit_binary_refused", "call edit binary_file"),
    }
    found.update(extras[c["act"]][0] for c in calls if c["act"] in extras and extras[c["act"]][1] in lines)
    if "turn refused busy" in text:
        found.add("turn_busy")
    if "end aborted" in text:
        found.add("turn_aborted")
    titled = [line for line in lines if line.startswith("title requests=")]
    if any(line.startswith("title requests=1") and not line.endswith("title=-") for line in titled):
        found.add("title_from_the_session_model")
    if any(line.startswith("title requests=1") and line.endswith("title=-") for line in titled):
        found.add("title_none")
    if "slots held: the request waited for one" in lines:
        found.add("request_waits_for_a_slot")
    if any(line.startswith("title requests=0") for line in titled):
        found.add("title_of_a_named_session")
    found.update(chat_cases(setup, lines))
    children = [r for e in inputs for rs in dict(e.get("children", {})).values() for r in rs]
    children += [r for e in events if "agent" in e for r in e["agent"].get("replies", [])]
    more = {
        "thinking_streamed": any(line.startswith("thinking ") for line in lines),
        "thinking_of_a_child": any(line.startswith("sub ") and ": thinking " in line for line in lines),
        "child_killed_without_report": any(c["act"] == KILL_CALL[2] for r in children for c in r.get("calls", []))
        and ("call task subagent_failed" in lines or "ended (exit -9) without a report" in text),
        "child_settings_error": any(line.startswith("sub ") and ": row settings_error: " in line for line in lines),
        "request_aborted_waiting_for_a_slot": "slots held: the turn was aborted while its request waited for one" in lines,
        "tool_not_a_file": "call read not_a_file" in lines,
        "tool_file_too_large": "call read too_large" in lines and "call edit too_large" in lines,
        "tool_empty_path": any(c["act"] == "read-empty-path" for c in calls) and "call read invalid_arguments" in lines,
        "rewind_refused_while_a_turn_runs": any(a == "rewind refused busy" and b.startswith("request ") for a, b in zip(lines[1:], lines)),
        "rewind_refused_while_a_child_runs": any(a == "rewind refused busy" and b.startswith("agent ") for a, b in zip(lines[1:], lines)),
        "model_unresolved_turn_fails": any(e.get("model") for e in events) and any(a == "end failed" and b.startswith("input ") for a, b in zip(lines[1:], lines)),
        "child_model_unresolved": "ended without a report (failed): provider xai has no credentials" in text,
        "agent_stops_while_a_turn_runs": any(a == "end aborted" and b == "agent stops" for a, b in zip(lines[1:], lines)),
        "turn_fails_when_the_stack_breaks": any(a == "error turn_failed" and b == "end failed" for a, b in zip(lines, lines[1:])),
        "turn_fails_on_a_broken_stack": any(a.startswith("input ") and b == "error turn_failed" for a, b in zip(lines, lines[1:])),
        "child_spawn_not_json": any(e.get("spawn_line") == "not json" for e in events) and "spawn exit 2: " in text,
        "child_spawn_not_an_object": any(e.get("spawn_line") == "[1, 2]" for e in events) and "spawn exit 2: " in text,
        "child_parent_gone": any(isinstance(e.get("spawn_line"), dict) for e in events) and "spawn exit 1" in lines,
        "abort_as_the_turn_starts": any(e.get("early", {}).get("abort") is True for e in inputs)
        and any(a.startswith("input ") and b == "abort ok" and c == "end aborted" for a, b, c in zip(lines, lines[1:], lines[2:])),
        "steer_as_the_turn_starts": any(f"row joined: {t}" in text for e in inputs if not e.get("early", {}).get("abort") for t in e.get("early", {}).get("steer", [])),
        "follow_up_as_the_turn_starts": any(
            sum(line.startswith("end ") for line in segment) > 1 and e.get("early", {}).get("follow_up") and not e.get("early", {}).get("abort")
            for e, segment in zip(inputs, segments(lines))
        ),
    }
    found.update(name for name, hit in more.items() if hit)
    return found


def segments(lines: Sequence[str]) -> list[list[str]]:
    """The lines of each input, from its ``input`` line to the next one's."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith("input "):
            found.append([])
        if found:
            found[-1].append(line)
    return found


def chat_cases(setup: dict[str, Any], lines: Sequence[str]) -> set[str]:
    """The chat's cases a model transcript shows: its runs' requests open with the view (``v<lines>``)."""
    if setup.get("chat") is not True:
        return set()
    views = [int(m.group(1)) for line in lines if (m := re.search(r"sent=v(\d+)\+now\+turn\+", line)) and not line.startswith("sub ")]
    checks = {
        "chat_turn_from_the_view": bool(views),
        "chat_view_grows": any(v > 0 for v in views),
        "chat_memory_tools": "call zoom ok" in lines and "call date ok" in lines,
        "chat_task_from_the_view": any(line.startswith("sub ") and " sent=v" in line for line in lines),
        "chat_report_logged": any(line.startswith("row subagent: [") for line in lines),
    }
    return {name for name, hit in checks.items() if hit}


def spent_leak_answers(inputs: Sequence[Event], lines: Sequence[str]) -> bool:
    """The first run's every note spent on its first eight replies (none an answer or a call), its
    ninth leaked markup that does not rebuild, and the run answered: the markup is the answer."""
    if not inputs:
        return False
    first = list(inputs[0].get("replies", []))
    noted = all(not r.get("calls") and not r.get("leaks") and not str(r.get("text", "")).strip() and not r.get("steer") for r in first[:8])
    if len(first) < 9 or not noted or not first[8].get("leaks"):
        return False
    at = next((n for n, line in enumerate(lines) if line.startswith("note ") and line.endswith(" 8/8")), None)
    ends = [line for line in lines[at or 0 :] if line.startswith("end ")]
    return at is not None and bool(ends) and ends[0] == "end answered"


def compaction_cases(events: Sequence[Event], lines: Sequence[str]) -> set[str]:
    """The compaction cases a model transcript shows (S6.6)."""
    setup = next((dict(e["setup"]) for e in events if "setup" in e), {})
    mode = setup.get("compaction")
    if mode is None:
        return set()
    found: set[str] = set()
    text = "\n".join(lines)
    checks = {
        "compaction_ready": "row compaction: compaction ready" in text,
        "compaction_failed": "compaction failed: (the summary request failed)" in text,
        "compaction_empty_summary": "compaction failed: the summary is empty" in text,
        "compaction_again": "summary sent=s" in text,
        "compaction_blocking": mode == "blocking" and "compaction_end" in text,
    }
    found.update(name for name, hit in checks.items() if hit)
    queued = False
    for at, line in enumerate(lines):
        after = lines[at + 1 : at + 3]
        if line.startswith("row compaction: compaction ready"):
            queued = mode == "background"
        elif line.startswith("row compaction: compaction_end"):
            queued = False
            if mode == "background":
                found.add("compaction_placed_in_turn" if lines[at - 1].startswith("end ") else "compaction_placed_next_run")
        elif line.startswith("row joined: "):
            if any(a.startswith("summary sent=") for a in after):
                found.add("compaction_after_join")
            elif queued and len(json.dumps(line[len("row joined: ") :])) <= 4 * KEEP:
                found.add("compaction_queued_starts_none")  # a join that would start one, with a summary queued
    return found


BRIDGE = Bridge(
    area="agent",
    count=SPAWN_FIRST + 1,
    generate=generate,
    model=model_transcript,
    production=production,
    cases=CASES,
    reached=reached,
    finish=finish,
)
