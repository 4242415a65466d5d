"""``eukhe memory simulate``: a synthetic run of the planner, the sawtooth of the view and of
the compaction view (a command: no law speaks of it; moved out of ``eukhe.memory``).

Message sizes follow the note (``eukhe.memory.simulate.note_sizes``) from a fixed seed; the
compactor is never late (every ready node is built at once with a line of 400-512 bytes). The
run records, after each message, the bytes of both views, and counts batches, merges and the
lines each batch rewrote (the lines from the first merged one to the end: what the next call
reads without the prompt cache).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config
from eukhe.memory.simulate import note_sizes


def register(sub: Any) -> None:
    """Nothing to add: ``eukhe.commands.memory`` registers the verb and runs ``simulate`` here."""


def line_size(node: tuple[int, int]) -> int:
    return min(NODE, 400 + (node[1] * 7 + node[0] * 13) % 113)


@dataclass
class Run:
    messages: int
    view_bytes: list[int] = field(default_factory=list)
    cview_bytes: list[int] = field(default_factory=list)
    view_lines: list[int] = field(default_factory=list)
    cview_lines: list[int] = field(default_factory=list)
    batches: int = 0
    merges: int = 0
    rewritten: int = 0
    cview_merges: int = 0
    calls: int = 0

    def stats(self) -> dict[str, object]:
        def spread(values: list[int]) -> dict[str, float]:
            if not values:
                return {"min": 0, "max": 0, "mean": 0.0, "last": 0}
            return {"min": min(values), "max": max(values), "mean": round(sum(values) / len(values), 1), "last": values[-1]}

        return {
            "messages": self.messages,
            "view_lines": spread(self.view_lines),
            "view_bytes": spread(self.view_bytes),
            "cview_lines": spread(self.cview_lines),
            "cview_bytes": spread(self.cview_bytes),
            "batches": self.batches,
            "merges_per_batch": round(self.merges / self.batches, 1) if self.batches else 0.0,
            "rewritten_lines_per_message": round(self.rewritten / self.messages, 2) if self.messages else 0.0,
            "cview_merges": self.cview_merges,
            "model_calls": self.calls,
        }


def simulate(messages: int, seed: int = 2026, config: Config = Config(), step: Callable[[int], None] | None = None) -> Run:
    """The run over ``messages`` synthetic messages; ``step`` (if any) gets the messages done after each."""
    chat = Chat(config, keep_texts=False)
    run = Run(messages)
    for done, length in enumerate(note_sizes(messages, seed), 1):
        chat.message(length)
        if chat.batch > 0:
            run.batches += 1
            run.merges += chat.batch
            run.rewritten += len(chat.view) - max(0, chat.view.first_change)
        if chat.cmerge != "-":
            run.cview_merges += 1
        while chat.running:
            run.calls += 1
            node = chat.running[0]
            chat.done(0, line_size(node))
        run.view_bytes.append(chat.view.total)
        run.cview_bytes.append(chat.cview.total)
        run.view_lines.append(len(chat.view))
        run.cview_lines.append(len(chat.cview))
        if step is not None:
            step(done)
    return run


class PictureError(Exception):
    """The sawtooth cannot be drawn: matplotlib is missing, or the file cannot be written."""


def require_matplotlib() -> None:
    """PictureError when matplotlib cannot be imported (checked before a long run)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise PictureError(f"drawing needs matplotlib, which cannot be imported ({error}); install it with pip install matplotlib") from None


def picture(run: Run, path: str, config: Config = Config()) -> None:
    """The sawtooth: view and compaction view bytes against messages, with their budgets.
    PictureError when matplotlib is missing or the file cannot be written."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(10, 4.5))
    xs = range(1, run.messages + 1)
    axes.plot(xs, run.view_bytes, linewidth=0.8, label="view bytes")
    axes.plot(xs, run.cview_bytes, linewidth=0.8, label="compaction view bytes")
    for level, style in ((config.ceiling, "--"), (config.floor, ":"), (config.cceiling, "--"), (config.cfloor, ":")):
        axes.axhline(level, color="grey", linestyle=style, linewidth=0.6)
    axes.set_xlabel("messages")
    axes.set_ylabel("bytes")
    axes.set_title(f"OptChat sawtooth: {run.messages:,} messages, {run.batches} batches")
    axes.legend(loc="lower right")
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=110)
    except OSError as error:
        raise PictureError(f"cannot write {path}: {error.strerror or error}") from None
    finally:
        plt.close(figure)
