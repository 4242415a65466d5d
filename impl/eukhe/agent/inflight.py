"""providerMaxInFlight (control.md S4b.4): at most N requests of a provider at once, across every
session of the agent dir, whatever process sends them.

A provider with limit N has N slot files, ``<agent dir>/run/inflight/<provider>/<i>.lock``; a
request holds one slot (an exclusive ``flock``) from its send to its stream's end. A request
takes the first free slot; with none free it waits on one (slot ``pid % N``, so the processes
that wait spread over the slots), in a thread, while its event loop goes on. The kernel drops a
slot when its holder dies, so a killed agent never keeps one. The limit comes from the config
(``Config.limit``): a malformed value already limits to 1 (S4b.4, limit_malformed_fails_closed);
no entry is no limit. Derived: a limit of 0 is taken as 1, since no request could ever run.

``Gated`` wraps a wire client so that each attempt (each retry too) takes a slot: a retry's
wait holds none.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from eukhe.inference.wire import events
from eukhe.inference.wire.base import closing
from eukhe.inference.wire.plan import Request
from eukhe.session.private import make_dirs

INFLIGHT_DIR = ("run", "inflight")


def _slot_name(provider: str) -> str:
    """A provider id as one path segment (ids are ASCII words; anything else is escaped)."""
    return "".join(c if c.isalnum() or c in "-_." else f"%{ord(c):02x}" for c in provider).lstrip(".") or "%2e"


class Slots:
    """The N slots of one provider in one agent dir."""

    def __init__(self, agent_dir: Path, provider: str, limit: int, on_wait: Callable[[int], None] | None = None) -> None:
        self.limit = max(1, limit)
        self.dir = Path(agent_dir).joinpath(*INFLIGHT_DIR, _slot_name(provider))
        self.on_wait = on_wait  # told the slot a request waits on, when every slot is taken

    def _open(self, index: int) -> int:
        make_dirs(self.dir)
        return os.open(self.dir / f"{index}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @asynccontextmanager
    async def held(self) -> AsyncIterator[int]:
        """One slot, held while the block runs (its index)."""
        index, fd = await self._take()
        try:
            yield index
        finally:
            os.close(fd)  # closing the file releases its lock

    async def _take(self) -> tuple[int, int]:
        for index in range(self.limit):
            fd = self._open(index)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return index, fd
            except BlockingIOError:
                os.close(fd)
        index = os.getpid() % self.limit
        fd = self._open(index)
        if self.on_wait is not None:
            self.on_wait(index)
        waiting = asyncio.get_running_loop().run_in_executor(None, fcntl.flock, fd, fcntl.LOCK_EX)
        try:
            await asyncio.shield(waiting)
        except BaseException:  # given up (the turn aborted): the lock, once the thread has it, goes at once
            waiting.add_done_callback(lambda _: os.close(fd))
            raise
        return index, fd


class Gated:
    """A wire client whose every request holds one of its provider's slots while it streams."""

    def __init__(self, client: Any, slots: Slots) -> None:
        self.client = client
        self.slots = slots

    async def stream(self, request: Request, filter: events.StreamFilter | None = None) -> AsyncGenerator[events.Event, None]:
        async with self.slots.held():
            async with closing(self.client.stream(request, filter)) as stream:
                async for event in stream:
                    yield event
