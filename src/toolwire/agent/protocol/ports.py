"""The tools' file-system and terminal ports, backed by the ACP client when it offers them.

``ClientFileSystem`` reads and writes through ``fs/read_text_file`` /
``fs/write_text_file`` when the client advertised them in ``initialize``, so the model
sees the editor's buffers, unsaved edits included; otherwise, and for
whichever direction the client did not offer, the local disk (atomic writes).

``ClientTerminal`` runs a ``Bash`` command in a client terminal (``terminal/create``,
``wait_for_exit``, ``output``, ``release``): the editor shows the live output itself
from the ``{"type": "terminal"}`` content, so no output frames are re-sent at all (a
client can otherwise be flooded with hundreds of MB of them). ``on_created`` puts that
content on the call before anything else happens: ACP wants it before ``terminal/release``.
A timeout or a cancel kills the command (``terminal/kill``), and the terminal is always
released. Background commands run locally (the model can read their log file). In a
sandbox, the command line the client runs is the sandbox's around ``bash -c``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from acp.exceptions import RequestError
from acp.interfaces import Client
from acp.schema import EnvVariable, TerminalOutputResponse

from toolwire.tools import BackgroundJob, CommandResult, LocalFileSystem, LocalTerminal
from toolwire.tools.terminal import OutputCallback
from toolwire.updates.output import cap_text

log = logging.getLogger("toolwire.agent")
_CLEANUP_S = 5.0  # a client that never answers kill/release must not wedge the turn
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class ClientFileSystem:
    """Text files through the editor where it allows, else the local disk."""

    def __init__(self, client: Client, session_id: str, *, read: bool, write: bool) -> None:
        self._client = client
        self._session_id = session_id
        self._read = read
        self._write = write
        self._local = LocalFileSystem()

    async def read_text(self, path: Path) -> str:
        """The editor's view of the file; ``FileNotFoundError`` when there is none."""
        if not self._read:
            return await self._local.read_text(path)
        # A file that is not on disk is new (a Write creating it): asking the editor
        # would only make it log "Resource not found" to the user (acpx does, each time).
        if not await asyncio.to_thread(os.path.lexists, path):
            raise FileNotFoundError(errno.ENOENT, "No such file", str(path))
        try:
            response = await self._client.read_text_file(
                session_id=self._session_id, path=str(path)
            )
        except RequestError as exc:
            # Clients differ in how they say "no such file" (-32002, -32603 + text...):
            # the disk settles it, and the tools need FileNotFoundError to create files.
            if not await asyncio.to_thread(os.path.exists, path):
                raise FileNotFoundError(errno.ENOENT, "No such file", str(path)) from exc
            why = refusal_reason(exc)
            raise OSError(errno.EPERM, f"The editor refused to read {path}: {why}") from exc
        return response.content

    async def write_text(self, path: Path, content: str) -> None:
        """Write through the editor (it updates its buffer), else atomically on disk."""
        if not self._write:
            await self._local.write_text(path, content)
            return
        try:
            await self._client.write_text_file(
                session_id=self._session_id, path=str(path), content=content
            )
        except RequestError as exc:
            why = refusal_reason(exc)
            raise OSError(errno.EPERM, f"The editor refused to write {path}: {why}") from exc


class ClientTerminal:
    """``Bash`` commands in the client's terminals (one ``ClientTerminal`` per call)."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        background: LocalTerminal,
        on_created: Callable[[str], None] | None = None,
        on_refused: Callable[[str], None] | None = None,
    ) -> None:
        self._client = client
        self._session_id = session_id
        self._background = background
        self._on_created = on_created
        self._on_refused = on_refused

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        on_output: OutputCallback | None = None,
        max_output_bytes: int = 30_000,
    ) -> CommandResult:
        """Run to completion or ``timeout``; the editor renders the output live.

        A client that refuses the terminal (acpx without a human to ask does) fails
        this command with its reason; a sandboxed one runs here instead, in the same
        sandbox, and ``on_refused`` hears why (the session stops asking)."""
        argv = ["bash", "-c", command]
        if self._background.sandbox is not None:
            argv = await self._background.sandbox.wrap(argv, cwd)
        try:
            created = await self._client.create_terminal(
                session_id=self._session_id,
                command=argv[0],
                args=argv[1:],
                cwd=str(cwd),
                env=[EnvVariable(name=k, value=v) for k, v in _QUIET_ENV.items()],
                output_byte_limit=max_output_bytes * 4,
            )
        except RequestError as exc:
            why = refusal_reason(exc)
            if self._background.sandbox is None:
                raise OSError(errno.EPERM, f"The editor refused to run the command: {why}") from exc
            if self._on_refused is not None:
                self._on_refused(why)
            return await self._background.run(
                command,
                cwd=cwd,
                timeout=timeout,
                on_output=on_output,
                max_output_bytes=max_output_bytes,
            )
        terminal_id = created.terminal_id
        if self._on_created is not None:
            self._on_created(terminal_id)
        try:
            timed_out = await self._wait(terminal_id, timeout)
            output = await self._client.terminal_output(
                session_id=self._session_id, terminal_id=terminal_id
            )
        except BaseException:
            await self._cleanup(self._kill(terminal_id))  # cancelled: nothing may survive
            raise
        finally:
            await self._cleanup(self._release(terminal_id))
        return _result(output, terminal_id, timed_out=timed_out, max_bytes=max_output_bytes)

    async def start_background(self, command: str, *, cwd: Path) -> BackgroundJob:
        """Local: a client terminal's output could not be read back by the model."""
        return await self._background.start_background(command, cwd=cwd)

    async def aclose(self) -> None:
        """Nothing of its own to close (background jobs belong to the session)."""

    async def _wait(self, terminal_id: str, timeout: float) -> bool:
        """Wait for the exit; on timeout kill the command. True if it timed out."""
        try:
            await asyncio.wait_for(
                self._client.wait_for_terminal_exit(
                    session_id=self._session_id, terminal_id=terminal_id
                ),
                timeout,
            )
        except TimeoutError:
            await self._kill(terminal_id)
            return True
        return False

    async def _kill(self, terminal_id: str) -> None:
        await self._client.kill_terminal(session_id=self._session_id, terminal_id=terminal_id)

    async def _release(self, terminal_id: str) -> None:
        await self._client.release_terminal(session_id=self._session_id, terminal_id=terminal_id)

    async def _cleanup(self, step: Coroutine[Any, Any, None]) -> None:
        # Shielded: runs to its end even if the turn is cancelled meanwhile (the cancel
        # still propagates); bounded, so a client that never answers cannot wedge us.
        task = asyncio.ensure_future(step)
        task.add_done_callback(_consume)
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLEANUP_S)
        except (RequestError, TimeoutError, ConnectionError) as exc:
            log.warning("session %s: terminal cleanup failed: %s", self._session_id, exc)


def _result(
    output: TerminalOutputResponse, terminal_id: str, *, timed_out: bool, max_bytes: int
) -> CommandResult:
    """The command's end as ``Bash`` reports it (a signal is a negative exit code)."""
    status = output.exit_status
    code = None if status is None else status.exit_code
    if code is None and status is not None and status.signal:
        code = -_signal_number(status.signal)
    text = cap_text(output.output, max_bytes)
    return CommandResult(
        output=text,
        exit_code=None if timed_out else code,
        timed_out=timed_out,
        output_chars=len(output.output),
        truncated=output.truncated or text != output.output,
        terminal_id=terminal_id,
    )


def refusal_reason(exc: RequestError) -> str:
    """What a client said when it refused a request: its ``data`` details where it gave
    some (acpx: "Permission denied for terminal/create"), else its message."""
    data = exc.data
    if isinstance(data, dict):
        detail = data.get("details") or data.get("message")
        if isinstance(detail, str) and detail:
            return detail
    if isinstance(data, str) and data:
        return data
    return str(exc) or "no reason given"


def _consume(task: asyncio.Future[None]) -> None:
    """Retrieve a cleanup's outcome, so an abandoned one logs no "never retrieved"."""
    if not task.cancelled():
        task.exception()


def _signal_number(name: str) -> int:
    with contextlib.suppress(KeyError, ValueError):
        return int(signal.Signals[name if name.startswith("SIG") else f"SIG{name}"])
    return 0


__all__ = ["ClientFileSystem", "ClientTerminal", "refusal_reason"]
