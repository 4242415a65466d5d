"""The model's transcript of the chat memory on disk (bridge area ``optchat_store``): the optchat
scenario events, each logged as ``bend.optchat.fold.logged`` says, and ``restart``: the owner
stops and the chat is reopened from its log (``bend.optchat.fold.reopen``; memory.md rule 25,
D1, D7, F1). After each event the line of ``bend.optchat.transcript`` (view, compaction view,
shrinking flag, batch, calls, work queues); after a restart also the whole rendered view, the
context of the first running nodes and the number of log lines.

``python -m bend.optchat_store FILE`` prints it (BRIDGE_MODEL_CMD).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bend import scenario
from bend.optchat import chat as C
from bend.optchat.fold import Log, Msg, logged, restart
from bend.optchat.node import name
from bend.optchat.text import filler, line_size
from bend.optchat.transcript import Event, config, show, status, zoom


def transcript(events: Sequence[Event]) -> list[str]:
    chat = C.Chat()
    log: Log = ()
    base, spread = 400, 113
    out: list[str] = []
    for number, event in enumerate(events):
        kind = event.get("e")
        extra = ""
        before = chat
        if kind == "config":
            cfg, base, spread = config(event)
            chat, log = C.Chat(config=cfg), ()
        elif kind == "m":
            chat = C.message(chat, filler(f"m{chat.t}", int(event["size"])))
        elif kind == "done":
            if chat.running:
                node = chat.running[int(event["k"]) % len(chat.running)]
                chat = C.done(chat, int(event["k"]), filler(name(node), int(event["size"])))
        elif kind == "fail":
            chat = C.fail(chat, int(event["k"]))
        elif kind == "idle":
            while chat.running:
                node = chat.running[0]
                step = C.done(chat, 0, filler(name(node), line_size(node, base, spread)))
                log, chat = log + logged(chat, step), step
            before = chat
        elif kind == "wait":
            chat = C.wait(chat)
        elif kind == "go":
            chat = C.go(chat)
        elif kind == "tick":
            chat = C.tick(chat)
        elif kind == "zoom":
            extra = " " + zoom(chat, int(event["id"]), int(event["n"]))
        elif kind != "restart":
            extra = f" unknown event {kind!r}"
        if kind != "config":
            log = log + logged(before, chat)
        if kind == "restart":
            chat, log = restart(chat, log)
            messages = sum(1 for r in log if isinstance(r, Msg))
            extra = f" log={messages}+{len(log) - messages}"
        out.append(f"{number} {kind} {status(chat)}{extra}")
        if kind == "restart" or (kind == "m" and chat.batch > 0):
            out.extend(show(number, chat))
    out.extend(show(len(events), chat))
    return out


if __name__ == "__main__":
    raise SystemExit(scenario.main(transcript, sys.argv[1:]))
