"""The agent's stdio wire: newline-delimited JSON-RPC, guarded, and protocol-only stdout.

The official SDK (``acp`` 0.12.1) runs the JSON-RPC connection; this module gives it a
``Transport`` of our own instead of its ``NdjsonTransport``, for three reasons:

* **Malformed input.** The SDK logs a line that is not JSON and drops it, so the client
  never hears of it; JSON-RPC 2.0 asks for an error response with ``id: null``. Here a
  bad line is answered with ``-32700 Parse error`` (``-32600 Invalid request`` for JSON
  that is not an object, which the SDK would crash its receive loop on), and the agent
  keeps serving. So is a line nested too deeply to parse, and a message whose JSON-RPC
  envelope is invalid (``toolwire.agent.protocol.envelope``: the SDK trusts it).
* **One message never ends the loop.** A valid envelope whose params the v2 translation
  or the agent's hook cannot read is answered ``-32602 Invalid params`` and serving goes
  on; an ``initialize`` asking for a version not spoken asks for the highest spoken
  (``handshake.spoken_version``).
* **Written means written.** ``on_sent`` sees each message once it is in the output
  buffer, in wire order (and ``on_received`` each request as it arrives): the agent
  opens a session's outbox only after its ``session/new`` response (ACP: nothing for a
  session before that response).
* **Pre-encoded notifications.** The update engine already holds each notification as
  its exact wire line (compact ASCII JSON, like the SDK's own sender); ``write_line``
  writes it as is, in order with everything else, with no second serialization.
* **ACP v2 beside v1.** With ``v2`` set (``[acp] v2``), a client that asks for version 2
  is served through ``toolwire.agent.protocol.v2``: its requests reach the SDK in v1
  shape, and everything written goes out in v2 shape.
* **Methods the SDK does not route.** ``session/delete`` is stable in ACP v1 but the SDK
  (generated from an older schema) answers it "method not found"; ``receive`` hands it
  on as the extension method in ``ROUTED_AS_EXTENSION``, which the agent's
  ``ext_method`` serves (the client sees its own method and id answered).

``open_stdio`` keeps stdout for the protocol alone: the real stdout is moved to a private
descriptor and descriptor 1 pointed at stderr, so a stray ``print`` or a child process
inheriting stdout cannot corrupt the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO, Final, Protocol

from toolwire.agent.protocol import envelope
from toolwire.agent.protocol.handshake import spoken_version
from toolwire.agent.protocol.v2 import V2Wire
from toolwire.updates.v2 import V2
from toolwire.updates.wire import encode

log = logging.getLogger("toolwire.agent")

#: Largest accepted input line (the SDK's default: prompts may embed whole files).
LINE_LIMIT: Final = 50 * 1024 * 1024


#: The unstable ``providers/*`` methods (``agent.features.providers``).
PROVIDER_METHODS: Final = ("providers/list", "providers/set", "providers/disable")
#: ACP methods the SDK does not route, and the extension method each is routed as.
ROUTED_AS_EXTENSION: Final = {
    "session/delete": "_session/delete",
    **{method: f"_{method}" for method in PROVIDER_METHODS},
    # The SDK logs an unknown notification as an error; the agent serves it as an extension.
    "$/cancel_request": "_$/cancel_request",
}


class _LineTooLongError(Exception):
    """An input line over ``LINE_LIMIT`` (skipped, answered with a parse error)."""


class StdioTransport:
    """An SDK ``Transport`` over a byte reader and writer; see the module doc."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: Writer,
        *,
        on_sent: Callable[[dict[str, Any]], None] | None = None,
        on_received: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.on_sent = on_sent
        self.on_received = on_received
        self._closed = False
        self._again: deque[dict[str, Any]] = deque()
        self.v2: V2Wire | None = None

    def serve_v2(self) -> None:
        """Answer a client that asks for protocol version 2 in v2 (``[acp] v2``)."""
        self.v2 = V2Wire(self._write_raw)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message (a response, a request, a notification) as one line."""
        wire = message if self.v2 is None else self.v2.outgoing(message)
        if wire is not None:
            self._write_raw((encode(wire) + "\n").encode("ascii"))
        if self.on_sent is not None:
            self.on_sent(message)
        await self.drain()

    def write_line(self, line: bytes) -> None:
        """Queue an already encoded line; the order of calls is the order on the wire."""
        self._write_raw(line if self.v2 is None else self.v2.line(line))

    def _write_raw(self, line: bytes) -> None:
        if self._closed or self._writer.is_closing():
            raise ConnectionError("the client's end of the connection is closed")
        self._writer.write(line)

    async def drain(self) -> None:
        """Wait until the output buffer is below its high-water mark."""
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC message; ``None`` at end of input. Bad lines are answered."""
        if self._again:
            message: dict[str, Any] | None = self._again.popleft()
            if message is not None and self.on_received is not None:
                self.on_received(message)
        else:
            message = await self._next_taken()
        method = message.get("method") if message is not None else None
        alias = ROUTED_AS_EXTENSION.get(method) if isinstance(method, str) else None
        if alias is not None and message is not None:
            message = {**message, "method": alias}
        return message

    async def _next_taken(self) -> dict[str, Any] | None:
        """The next valid message, in v1 shape and seen by ``on_received``. One whose
        params the translation or the hook cannot read is answered ``-32602`` (and a
        notification dropped with a log line): one message never ends the loop."""
        while True:
            message = await self._next_valid()
            if message is None:
                return None
            message = spoken_version(message, 1 if self.v2 is None else V2)
            try:
                translated = message if self.v2 is None else self.v2.incoming(message)
                if translated is None:  # a v2 request the wire answered itself: read on
                    continue
                if self.on_received is not None:
                    self.on_received(translated)
            except Exception as exc:  # whatever the params held: answered, not fatal
                await self._refuse(message, f"{type(exc).__name__}: {exc}")
                continue
            return translated

    async def _refuse(self, message: dict[str, Any], detail: str) -> None:
        if "method" in message and "id" in message:
            await self._reject(-32602, "Invalid params", detail, envelope.reply_id(message))
        else:
            log.warning("message dropped (%s): %s", message.get("method"), detail)

    async def _next_valid(self) -> dict[str, Any] | None:
        """Read lines until one is a valid message (or the input ends); answer the others."""
        while True:
            try:
                line = await self._read_line()
            except _LineTooLongError:
                await self._reject(-32700, "Parse error", f"a line is over {LINE_LIMIT:,} bytes")
                continue
            if not line:
                return None
            line = line.strip()
            if line and (message := await self._parse(line)) is not None:
                return message

    async def _parse(self, line: bytes) -> dict[str, Any] | None:
        """The message on ``line``, or ``None`` once the line is answered as invalid."""
        try:
            message = json.loads(line)
        except ValueError as exc:  # UnicodeDecodeError included
            await self._reject(-32700, "Parse error", f"the line is not JSON: {exc}")
            return None
        except RecursionError:  # json's C parser recurses once per level
            await self._reject(-32700, "Parse error", "the line is nested too deeply")
            return None
        if not isinstance(message, dict):
            await self._reject(-32600, "Invalid request", "a message must be a JSON object")
            return None
        problem = envelope.check(message)
        if problem is None:
            return message
        await self._reject(-32600, "Invalid request", problem, envelope.reply_id(message))
        if not envelope.answers_us(message):
            return None
        # A broken answer to one of our requests: that request fails rather than waits.
        error = _error(-32600, "Invalid response", problem)
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}

    def unread(self, message: dict[str, Any]) -> None:
        """Give ``message`` back: the next ``receive`` returns it (and reports it again)."""
        self._again.append(message)

    async def close(self) -> None:
        """Flush and close the output."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
        self._writer.close()

    async def _reject(self, code: int, message: str, detail: str, to: Any = None) -> None:
        log.warning("input rejected (%s): %s", code, detail)
        await self.send({"jsonrpc": "2.0", "id": to, "error": _error(code, message, detail)})

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as exc:
                # A line longer than the reader's buffer: take what is there and go on.
                chunks.append(await self._reader.readexactly(exc.consumed))
                size += exc.consumed
                if size > LINE_LIMIT:
                    await self._skip_rest()
                    raise _LineTooLongError from None
            except asyncio.IncompleteReadError as exc:
                chunks.append(exc.partial)
                return b"".join(chunks)

    async def _skip_rest(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


def _error(code: int, message: str, detail: str) -> dict[str, Any]:
    return {"code": code, "message": message, "data": {"details": detail}}


async def open_stdio(pending: bytes = b"") -> tuple[asyncio.StreamReader, Writer]:
    """Async streams on stdin and on the real stdout, which nothing else can write to.

    ``pending``: bytes already read from stdin, read again first (before any byte read
    from here on, whatever arrives meanwhile).

    Pipes (what editors and SDK clients use) are async; a regular file, as in
    ``toolwire acp < requests.jsonl > out.jsonl``, is copied into a pipe by a thread
    (``_piped``) and written directly (a file never blocks for long).
    """
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    protocol_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray writes now land on stderr
    reader = asyncio.StreamReader(limit=1024 * 1024)
    if pending:
        reader.feed_data(pending)
    source: Any = sys.stdin
    if not _pollable(sys.stdin.fileno()):
        source = _piped(sys.stdin.fileno())
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    pipe = os.fdopen(protocol_fd, "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    except ValueError:
        return reader, FileWriter(pipe)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: a pipe, a socket or a terminal.

    asyncio takes any character device, but epoll refuses ``/dev/null`` (and other
    devices) once the loop runs, and the agent would then wait for ever on an input that
    has already ended (``toolwire acp < /dev/null``). Those go through ``_piped`` like a file.
    """
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _piped(fd: int) -> BinaryIO:
    """A pipe that a thread fills from ``fd`` (a file or a device the loop cannot wait on).

    The thread blocks while the pipe is full and the loop's reader pauses it when its own
    buffer is, so an endless input (``/dev/zero``) costs a bounded amount of memory: the
    agent reads it as fast as it handles it, never ahead.
    """
    out, into = os.pipe()

    def pump() -> None:
        try:
            while data := os.read(fd, 65536):
                while data:
                    data = data[os.write(into, data) :]
        except OSError:
            pass  # the reading end closed: the agent is ending
        finally:
            os.close(into)

    threading.Thread(target=pump, name="toolwire-stdin", daemon=True).start()
    return os.fdopen(out, "rb", buffering=0)


class FileWriter:
    """The ``StreamWriter`` subset the transport uses, over a plain file."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        self._file.write(data)

    async def drain(self) -> None:
        self._file.flush()

    def is_closing(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        self._file.close()


class Writer(Protocol):
    """What ``StdioTransport`` writes to: an ``asyncio.StreamWriter`` or a ``FileWriter``."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


__all__ = [
    "LINE_LIMIT",
    "PROVIDER_METHODS",
    "ROUTED_AS_EXTENSION",
    "FileWriter",
    "StdioTransport",
    "Writer",
    "open_stdio",
]
