"""A rich progress bar for long work, drawn on a terminal only.

``terminal_bar`` gives a ``rich.progress.Progress`` that draws on standard error (or on the
console it is given) only when that stream is a terminal that can redraw a line: on a pipe, a
file or a dumb terminal the bar is disabled and writes no byte, so piped output is what it is
without the bar. ``step`` gives the callback a long loop calls after each unit of work (the
units done, and the total when the loop learns it): None when the bar is disabled, so the loop
pays nothing there. Lines printed to standard output while the bar runs go above it only when
standard output is a terminal too; a standard output sent to a pipe or a file keeps its bytes.
"""

from __future__ import annotations

import sys
from typing import IO, Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn


def register(sub: Any) -> None:
    """Nothing to add: the commands that run long work draw their bars with ``terminal_bar``."""


def is_terminal(stream: IO[str] | None) -> bool:
    """Whether ``stream`` is a terminal (False for a pipe, a file, a closed or missing stream)."""
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):
        return False


COUNTED: tuple[ProgressColumn, ...] = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


def terminal_bar(*columns: ProgressColumn, console: Console | None = None, transient: bool = True) -> Progress:
    """A progress bar (``columns``, else description, bar, done/total, time) on ``console``
    (else standard error), disabled unless that console writes to a terminal that can redraw."""
    shown_on = console if console is not None else Console(stderr=True)
    live = is_terminal(shown_on.file) and not shown_on.is_dumb_terminal
    return Progress(
        *(columns or COUNTED),
        console=shown_on,
        transient=transient,
        disable=not live,
        redirect_stdout=live and is_terminal(sys.stdout),
        redirect_stderr=live,
    )


class Step(Protocol):  # pragma: no mutate block
    def __call__(self, count: int, total: int | None = None, /) -> None: ...


def step(bar: Progress, task: TaskID) -> Step | None:
    """The callback that sets ``task``'s units done (and its total, when given); None when
    ``bar`` is disabled."""
    if bar.disable:
        return None

    def done(count: int, total: int | None = None, /) -> None:
        bar.update(task, completed=count, total=total)

    return done
