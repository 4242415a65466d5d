"""The model's transcript of a scenario (the bridge, memory.md "The bridge").

After each event one line: the event, T, the view (lines/bytes and its newest line: between
batches the view only grows at its end, rule 28), the compaction view, the shrinking flag
(F1), the batch (merges, ``-`` when none ran), why the compaction view was merged, the running
calls, the work queue, and the work queue while a turn waits (``n`` = the view's unbuilt
lines, law need_first). At each batch that merged and at the end: the whole rendered view with
its cache mark (rules 15, 16, 18, 29), and the rendered context of some nodes (rule 34).

Events (JSON objects, key ``e``): ``config`` (jobs, ceiling, floor, cceiling, cfloor, base,
spread), ``m`` (size: a message of that many bytes, text ``filler("m<i>", size)``), ``done``
(k, size: the k-th running call ends with a line of that size), ``fail`` (k), ``idle`` (the
compactor is never late: every running call ends, oldest first, until none runs), ``wait``,
``go``, ``tick``, ``zoom`` (id, n).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bend.optchat import chat as C
from bend.optchat.node import Node, children, name, zoom_node
from bend.optchat.text import filler, flatten, line_size
from bend.optchat.view import BLOCK, render_lines, view_bytes

Event = Mapping[str, Any]
QUEUE_SHOWN = 8


def _names(nodes: Sequence[Node]) -> str:
    return ",".join(name(n) for n in nodes)


def status(chat: C.Chat) -> str:
    view, cview = chat.view, chat.cview
    newest = name(view[-1][0]) if view else "-"
    return (
        f"T={chat.t} v={len(view)}/{view_bytes(view)}@{newest} c={len(cview)}/{view_bytes(cview)}"
        f" open={int(chat.open)} batch={chat.batch if chat.batch >= 0 else '-'} cm={chat.cmerge}"
        f" run={_names(chat.running)} q={_names(C.queue(chat, chat.waiting, QUEUE_SHOWN))}"
        f" wait={int(chat.waiting)} wq=n{len(chat.unbuilt)}:{_names(C.queue(chat, True, QUEUE_SHOWN))}"
    )


def rendered(chat: C.Chat, nodes: tuple[Node, ...]) -> list[str]:
    """``<chat>``, the lines, ``</chat>``, with ``<mark>`` after the last whole block of 4."""
    lines = render_lines(nodes, lambda n: C.text_of(chat, n))
    whole = len(lines) // BLOCK * BLOCK
    marked = lines[:whole] + (["<mark>"] if whole else []) + lines[whole:]
    return ["<chat>"] + marked + ["</chat>"]


def show(number: int, chat: C.Chat) -> list[str]:
    """The whole view, and the context of the first two running nodes (else the newest message)."""
    out = [f"{number} | {line}" for line in rendered(chat, tuple(n for n, _ in chat.view))]
    targets = chat.running[:2] if chat.running else (((0, chat.t - 1),) if chat.t else ())
    for node in targets:
        out.append(f"{number} ctx {name(node)}")
        out.extend(f"{number} : {line}" for line in rendered(chat, C.context(chat, node)))
    return out


def zoom(chat: C.Chat, ident: int, n: int) -> str:
    """zoom(id, n): the line's two halves, or the message whole (rules 52, 53)."""
    found = zoom_node(chat.t, ident, n)
    if isinstance(found, str):
        return f"zoom error: {found}"
    if found[0] == 0:
        return f"zoom {name(found)} message {flatten(C.message_text(chat, found[1]))}"
    halves = render_lines(children(found), lambda node: C.text_of(chat, node))
    return f"zoom {name(found)} " + " || ".join(halves)


def config(event: Event) -> tuple[C.Config, int, int]:
    return (
        C.Config(
            jobs=int(event.get("jobs", C.JOBS)),
            ceiling=int(event.get("ceiling", C.VIEW_CEILING)),
            floor=int(event.get("floor", C.VIEW_FLOOR)),
            cceiling=int(event.get("cceiling", C.COMPACTION_CEILING)),
            cfloor=int(event.get("cfloor", C.COMPACTION_FLOOR)),
        ),
        int(event.get("base", 400)),
        int(event.get("spread", 113)),
    )


def idle(chat: C.Chat, base: int, spread: int) -> C.Chat:
    """The compactor is never late: running calls end, oldest first, until none runs."""
    while chat.running:
        node = chat.running[0]
        chat = C.done(chat, 0, filler(name(node), line_size(node, base, spread)))
    return chat


def transcript(events: Sequence[Event]) -> list[str]:
    """The model's transcript of a scenario."""
    chat = C.Chat()
    base, spread = 400, 113
    out: list[str] = []
    for number, event in enumerate(events):
        kind = event.get("e")
        extra = ""
        if kind == "config":
            cfg, base, spread = config(event)
            chat = C.Chat(config=cfg)
        elif kind == "m":
            chat = C.message(chat, filler(f"m{chat.t}", int(event["size"])))
        elif kind == "done":
            if chat.running:
                node = chat.running[int(event["k"]) % len(chat.running)]
                chat = C.done(chat, int(event["k"]), filler(name(node), int(event["size"])))
        elif kind == "fail":
            chat = C.fail(chat, int(event["k"]))
        elif kind == "idle":
            chat = idle(chat, base, spread)
        elif kind == "wait":
            chat = C.wait(chat)
        elif kind == "go":
            chat = C.go(chat)
        elif kind == "tick":
            chat = C.tick(chat)
        elif kind == "zoom":
            extra = " " + zoom(chat, int(event["id"]), int(event["n"]))
        else:
            extra = f" unknown event {kind!r}"
        out.append(f"{number} {kind} {status(chat)}{extra}")
        if kind == "m" and chat.batch > 0:
            out.extend(show(number, chat))
    out.extend(show(len(events), chat))
    return out
