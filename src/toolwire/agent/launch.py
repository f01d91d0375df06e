"""How ``toolwire acp`` starts: ``initialize`` answered before anything heavy has loaded.

An editor waits for the ``initialize`` answer before it shows the agent as ready. The
SDK's models (``acp.schema``) take about 0.4 s of CPU to import, the configuration
(pydantic models) and asyncio each a good part of a tenth of that: together many times a
bare interpreter's start-up. So ``serve`` starts loading the SDK and the configuration
in threads at once and, on the main thread meanwhile, reads the first line with plain
blocking reads: a plain ``initialize`` is answered at once (``toolwire.agent.protocol.handshake``)
and the agent takes in what the client said once everything is there. Any other first
line goes back, byte for byte, to the transport, which reads it first (it answers a bad
line; the SDK answers anything else exactly as it would have).

A bad configuration (malformed TOML, an unknown key, a bad option) does not end the
process: an editor would show a started agent that died. Its one line goes to stderr as
soon as it is known, and the agent serves on (``toolwire.agent.broken``): ``initialize``
answered as usual, ``session/new``, ``authenticate`` and the rest with that line as the
error. At the end of input it exits with status 2.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolwire.agent.protocol import envelope
from toolwire.agent.protocol.handshake import early_answer
from toolwire.config.errors import ConfigError

if TYPE_CHECKING:
    from toolwire.config import Config

_SERVER = "toolwire.agent.server"
_EARLY_LIMIT = 1 << 20
"""A first line longer than this goes to the transport unanswered (it rejects it)."""


class _Loading:
    """``load()`` on a thread of its own; ``ready`` (a pipe) is readable once it is done."""

    def __init__(self, load: Callable[[], Config]) -> None:
        self.config: Config | None = None
        self.error: BaseException | None = None
        self.ready, self._done = os.pipe()
        threading.Thread(target=self._run, args=(load,), daemon=True).start()

    def _run(self, load: Callable[[], Config]) -> None:
        try:
            self.config = load()
        except BaseException as exc:  # handed to the main thread, which raises it
            self.error = exc
        os.write(self._done, b"x")

    def result(self) -> Config:
        select.select([self.ready], [], [])
        os.close(self.ready)
        os.close(self._done)
        if self.error is not None:
            raise self.error
        assert self.config is not None
        return self.config


def serve(
    load: Callable[[], Config],
    *,
    record: str | None = None,
    v2: Callable[[], bool] = lambda: False,
) -> None:
    """Serve one client on stdio (what ``toolwire acp`` does), on the configuration
    ``load()`` returns (it may raise ``ConfigError``); ``v2()``: whether ``[acp] v2`` is on,
    read without loading the configuration (``toolwire.config.peek``)."""
    sdk = threading.Thread(target=importlib.import_module, args=(_SERVER,), daemon=True)
    sdk.start()
    loading = _Loading(load)
    try:
        read, initialized = _first_line(loading, v2)
        config, broken = _loaded(loading)
        sdk.join()
    except KeyboardInterrupt:
        return  # Ctrl-C while starting: exit quietly, as while serving
    server: Any = importlib.import_module(_SERVER)  # loaded by now: the join above
    import asyncio  # only now: its import alone costs several bare start-ups

    async def main() -> None:
        server.stop_on_signals()
        from toolwire.agent.protocol.transport import StdioTransport, open_stdio

        transport = StdioTransport(*await open_stdio(read))
        if config is None:
            await server.serve_broken(transport, str(broken), initialized=initialized)
        else:
            await server.serve_on(transport, config, record=record, initialized=initialized)

    # Ctrl-C or SIGTERM: the server has stopped every turn and command; exit quietly.
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(main())
    if broken is not None:
        raise SystemExit(2)


def _loaded(loading: _Loading) -> tuple[Config | None, ConfigError | None]:
    """The configuration, or the error that kept it from loading (said on stderr now)."""
    try:
        return loading.result(), None
    except ConfigError as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        sys.stderr.flush()
        return None, exc


def _first_line(loading: _Loading, v2: Callable[[], bool]) -> tuple[bytes, dict[str, Any] | None]:
    """Answer a first plain ``initialize``: (the bytes read after it, its params). Else
    (another line, the end of input, a bad configuration first): (every byte read, None)."""
    read = b""
    watch = [0, loading.ready]
    while b"\n" not in read and len(read) < _EARLY_LIMIT:
        ready = select.select(watch, [], [])[0]
        if loading.ready in ready:
            watch.remove(loading.ready)
            if loading.error is not None:
                return read, None
        if 0 in ready:
            data = os.read(0, 65536)
            if not data:
                return read, None
            read += data
    line, newline, rest = read.partition(b"\n")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return read, None
    # The transport's own checks first: what it would reject, it must see to answer.
    plain = isinstance(message, dict) and envelope.check(message) is None
    answer = early_answer(message) if plain else None
    if plain and answer is None:
        answer = _early_v2(message, v2)
    if not newline or answer is None:
        return read, None
    # The transport's encoding (compact, ASCII): the same bytes its ``send`` would write.
    _write_all((json.dumps(answer, separators=(",", ":"), allow_nan=False) + "\n").encode())
    params: dict[str, Any] = message["params"]
    return rest, params


def _early_v2(message: dict[str, Any], v2: Callable[[], bool]) -> dict[str, Any] | None:
    """The answer to a v2 ``initialize`` when ``[acp] v2`` is on: it depends on the
    client's capabilities only, as v1's does (the agent takes them in later)."""
    params = message.get("params")
    if (
        message.get("method") != "initialize"
        or not isinstance(message.get("id"), int | str)
        or not isinstance(params, dict)
        or type(params.get("protocolVersion")) is not int
        or params["protocolVersion"] < 2
        or not v2()
    ):
        return None
    from toolwire.agent.protocol.handshake_v2 import capabilities_v1, initialize_result_v2

    result = initialize_result_v2(capabilities_v1(params.get("capabilities")))
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


__all__ = ["serve"]
