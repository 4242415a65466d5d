"""Deliberate breaks of ``eukhe chat`` and ``eukhe login`` (impl/eukhe/commands/chat.py,
login.py) that only the cli bridge's later edge scenarios catch (``bridge.cli.EDGES`` past
scenario 0315; ``EUKHE_BREAK=<name> python -m bridge replay cli scenarios/cli/NNNN.jsonl``).

The classes: a chat whose standard input fails mid-way (a Unix socket reset by its peer once the
lines were sent): the failed read is the end of input, and the last line, which has no newline,
is still a turn (0316); ``login`` on a terminal, the key typed without echo (0317); a chat whose
agent process is killed mid-turn (0318) or as the chat shows a command's row, before the prompt's
request (0320); ``/agent NAME TASK`` typed while a turn runs, answered ok (0319); a chat whose
session's dir is there with no log, as another client that makes it meanwhile leaves it (0321); a
line whose request would be past the protocol's line limit, refused unsent (0322)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "cli_chat_failed_read_drops_last_line",
        "cli",
        "eukhe.commands.chat",
        '            data = b""\n        if not data:\n',
        '            data = b""\n            pending.clear()\n        if not data:\n',
        "production: a chat whose input fails mid-way (ECONNRESET) drops the last line, which has no newline, instead of taking it.",
    ),
    Break(
        "cli_login_terminal_key_lost",
        "cli",
        "eukhe.commands.login",
        '        return getpass.getpass(f"API key for {provider}: ")\n',
        '        return getpass.getpass(f"API key for {provider}: ")[:0]\n',
        "production: `login` on a terminal loses the key typed without echo (taken as empty: exit 2).",
    ),
    Break(
        "cli_chat_agent_end_unsaid",
        "cli",
        "eukhe.commands.chat",
        "            gone = watching.done()",
        "            gone = False",
        "production: a chat whose agent ends mid-turn (its connection gone) leaves quietly with exit 0 instead of saying so, exit 1.",
    ),
    Break(
        "cli_chat_request_gone_unsaid",
        "cli",
        "eukhe.commands.chat",
        "        except AgentGone:  # a request the connection ended under\n            gone = True\n",
        "        except AgentGone:  # a request the connection ended under\n            gone = False\n",
        "production: a chat whose request meets its agent's end (the prompt's, after /help) leaves quietly with exit 0.",
    ),
    Break(
        "cli_chat_agent_ok_unshown",
        "cli",
        "eukhe.commands.chat",
        '            self.term.row(f"[agent] {event.text}")',
        "            pass",
        "production: `/agent NAME TASK` answered ok shows no `[agent] ...` row.",
    ),
    Break(
        "cli_chat_session_made_meanwhile_fails",
        "cli",
        "eukhe.commands.chat",
        "        except SessionExists:  # another client made it meanwhile\n            pass\n",
        "        except SessionExists:  # another client made it meanwhile\n            raise\n",
        "production: a chat whose session another client made meanwhile (its dir there) fails instead of going on to the agent.",
    ),
    Break(
        "cli_chat_request_past_the_limit_sent",
        "cli",
        "eukhe.agent.client",
        "            if len(line) - 1 > p.LINE_LIMIT:\n",
        "            if len(line) - 1 > 2 * p.LINE_LIMIT:\n",
        "production: a request past the protocol's line limit is sent: the agent drops it unanswered and the chat waits for ever (0322: it is ended after the bridge's deadline).",
    ),
]
