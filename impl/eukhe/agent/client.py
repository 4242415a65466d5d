"""A client of the agent process of a session (asyncio): connect to its socket, send requests,
read events (the protocol: ``eukhe.agent.protocol``).

    client = await AgentClient.connect(protocol.socket_path(agent_dir, session_dir))
    state = await client.next()                      # the session's state comes first
    reply = await client.request(protocol.StatusRequest())   # the event that answers it
    async for event in client.events(): ...          # every event, in order, replies included

Every event the agent sends is given by ``next`` and ``events`` in the order it came, replies
included; ``request`` gives the id of its request to the agent when it has none, and returns
the first event answering it (``re``). A request whose line is past the protocol's limit is not
sent (``send`` and ``request``): it is answered here, an ``error`` of kind ``too_long`` naming
it, given as the agent's events are. A line from the agent that is not an event is given as
an ``error`` event of its ProtocolError's kind (never raised). When the connection ends,
``next`` raises ``AgentGone``, ``events`` stops, and a ``request`` waiting for its answer
raises ``AgentGone``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from eukhe.agent import protocol as p
from eukhe.paths import socket_address

READ_CHUNK = 1 << 16


class AgentGone(ConnectionError):
    """The connection to the agent ended (the agent stopped, or dropped this client)."""


class AgentClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, limit: int = p.LINE_LIMIT) -> None:
        self._reader = reader
        self._writer = writer
        self._limit = limit
        self._events: asyncio.Queue[p.Event | None] = asyncio.Queue()
        self._waiting: dict[str, asyncio.Future[p.Event]] = {}
        self._ids = itertools.count(1)
        self.gone = False
        self._task = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, address: Path, *, limit: int = p.LINE_LIMIT) -> AgentClient:
        """Connect to the agent's socket at ``address``; ConnectionRefusedError or
        FileNotFoundError when no agent listens there."""
        address = Path(address)
        with socket_address(address.parent, address.name) as where:
            reader, writer = await asyncio.open_unix_connection(where)
        return cls(reader, writer, limit=limit)

    async def send(self, *requests: p.Request) -> None:
        """Send ``requests`` in one write, so the agent reads them together (AgentGone when the
        connection has ended). A request whose line is past the protocol's limit is answered
        here, ``too_long``, and not sent (the others are): the agent drops such a line, and the
        error it sends cannot name the request it never read."""
        if self.gone:  # before any answer here: none may follow the end of the events
            raise AgentGone("the agent's connection has ended")
        lines: list[bytes] = []
        for request in requests:
            line = p.encode(request)
            if len(line) - 1 > p.LINE_LIMIT:
                self._answer(p.ErrorEvent(re=request.id, kind=p.TOO_LONG, message=f"the request is longer than the agent reads ({p.LINE_LIMIT} bytes): nothing was sent"))
            else:
                lines.append(line)
        try:
            self._writer.write(b"".join(lines))
            await self._writer.drain()
        except (ConnectionError, OSError) as error:
            raise AgentGone(f"the agent's connection ended: {error}") from error

    async def request(self, request: p.Request) -> p.Event:
        """Send ``request`` and return the event that answers it (``too_long`` from ``send`` for
        one past the protocol's limit)."""
        if request.id is None:
            request = request.model_copy(update={"id": f"c{next(self._ids)}"})
        assert request.id is not None
        answer: asyncio.Future[p.Event] = asyncio.get_running_loop().create_future()
        self._waiting[request.id] = answer
        try:
            await self.send(request)
            return await answer
        finally:
            self._waiting.pop(request.id, None)

    async def next(self) -> p.Event:
        """The next event; AgentGone once the connection has ended and every event was read."""
        event = await self._events.get()
        if event is None:
            self._events.put_nowait(None)  # every later call ends the same way
            raise AgentGone("the agent's connection has ended")
        return event

    async def until(self, predicate: Callable[[p.Event], bool]) -> p.Event:
        """The next event for which ``predicate`` holds (those before it are passed over)."""
        while True:
            event = await self.next()
            if predicate(event):
                return event

    async def events(self) -> AsyncIterator[p.Event]:
        """Every event until the connection ends."""
        while True:
            try:
                yield await self.next()
            except AgentGone:
                return

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()

    async def _read(self) -> None:
        lines = p.LineBuffer(self._limit)
        try:
            while True:
                data = await self._reader.read(READ_CHUNK)
                if not data:
                    break
                for line in lines.feed(data):
                    self._take(line)
        except (ConnectionError, OSError):
            pass
        finally:
            self.gone = True
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_exception(AgentGone("the agent's connection ended before it answered"))
            self._events.put_nowait(None)

    def _take(self, line: bytes | None) -> None:
        event: p.Event
        if line is None:
            event = p.ErrorEvent(kind=p.TOO_LONG, message=f"the agent sent a line longer than {self._limit} bytes: dropped")
        else:
            try:
                event = p.decode_event(line)
            except p.ProtocolError as error:
                event = p.ErrorEvent(re=error.re, kind=error.kind, message=f"the agent sent a line that is not an event: {error.message}")
        self._answer(event)

    def _answer(self, event: p.Event) -> None:
        """An event to the readers, and to the ``request`` it answers (``re``) if one waits."""
        re = getattr(event, "re", None)
        if isinstance(re, str):
            answer = self._waiting.get(re)
            if answer is not None and not answer.done():
                answer.set_result(event)
        self._events.put_nowait(event)
