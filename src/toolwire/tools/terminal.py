"""The terminal port ``Bash`` runs commands through, and its local implementation.

The agent plugs in an implementation backed by ACP client terminals (``terminal/create``
and friends) when the editor offers them; ``CommandResult.terminal_id`` then names the
terminal to embed as ``{"type": "terminal"}`` content. The local implementation runs
``bash -c COMMAND`` in its own process group (a new session), so a timeout or a
cancellation kills the command and everything it started, not just the shell; with a
``Confinement`` (``toolwire.sandbox.Sandbox``) that command line runs inside it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable

from toolwire.providers import key_variables as provider_key_variables
from toolwire.updates.output import OutputWindow

OutputCallback = Callable[[str], None]
_READ_SIZE = 65536
_DRAIN_GRACE_S = 1.0
# Commands the model runs must never wait on a pager or a prompt.
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}

#: The model providers' well-known key variables: a command never sees them (nor the
#: configured backends' ``api_key_env``), or ``echo $ANTHROPIC_API_KEY`` would put the
#: key in the editor, the session database and the next model request (docs/agent.md,
#: "Commands and keys"). ``[tools] env_allow`` lets one through. Every registered
#: provider's own key variables are among them (``toolwire.providers.key_variables``).
KEY_VARIABLES: frozenset[str] = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "VERTEX_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENROUTER_API_KEY",
        "XAI_API_KEY",
        "TOGETHER_API_KEY",
        "FIREWORKS_API_KEY",
        "COHERE_API_KEY",
        "CO_API_KEY",
        "PERPLEXITY_API_KEY",
        "CEREBRAS_API_KEY",
        "DASHSCOPE_API_KEY",
        "MOONSHOT_API_KEY",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
    }
) | frozenset(provider_key_variables())


def hidden_variables(
    key_variables: Iterable[str] = (), allow: Iterable[str] = ()
) -> frozenset[str]:
    """What commands must not see: ``KEY_VARIABLES`` and ``key_variables`` (the configured
    backends' ``api_key_env``), less the ``allow`` list."""
    known = KEY_VARIABLES | frozenset(provider_key_variables())  # a profile registered since
    return (known | frozenset(key_variables)) - frozenset(allow)


def command_env(
    hidden: Iterable[str] = KEY_VARIABLES,
    extra: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment a command runs with: ``environ`` (default: this process's) without
    the ``hidden`` variables, with the quiet settings and ``extra`` on top."""
    hide = frozenset(hidden)
    base = os.environ if environ is None else environ
    return {k: v for k, v in base.items() if k not in hide} | _QUIET_ENV | dict(extra or {})


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command ended. ``output`` is the combined stdout+stderr kept for the model.

    ``exit_code`` is None when the command was killed on timeout; a negative value is
    the signal that ended it. ``output_chars`` counts everything it printed.
    """

    output: str
    exit_code: int | None
    timed_out: bool = False
    output_chars: int = 0
    truncated: bool = False
    terminal_id: str | None = None


@dataclass(frozen=True, slots=True)
class BackgroundJob:
    """A command left running: its process id (the group to kill) and where output goes."""

    pid: int | None
    log_path: str | None = None
    terminal_id: str | None = None


@runtime_checkable
class Terminal(Protocol):
    """Where ``Bash`` runs commands."""

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        on_output: OutputCallback | None = None,
        max_output_bytes: int = 30_000,
    ) -> CommandResult:
        """Run to completion (or ``timeout`` seconds), streaming output to ``on_output``.

        Cancelling the awaiting task must kill the command promptly.
        """
        ...

    async def start_background(self, command: str, *, cwd: Path) -> BackgroundJob:
        """Start ``command`` and return at once; it runs until it ends or ``aclose()``."""
        ...

    async def aclose(self) -> None:
        """Kill whatever background commands are still running."""
        ...


class Confinement(Protocol):
    """A sandbox commands run in (``toolwire.sandbox.Sandbox``)."""

    async def wrap(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """The command line that runs ``argv`` in ``cwd`` inside the sandbox."""
        ...

    def refused(self, output: str, exit_code: int | None) -> str | None:
        """What the sandbox refused a command that ended so, or None."""
        ...

    async def aclose(self) -> None: ...


class LocalTerminal:
    """Commands as local ``bash -c`` subprocesses, in ``command_env(hidden, extra_env)``:
    the agent's environment without the key variables (``KEY_VARIABLES`` by default);
    inside ``sandbox`` when there is one, background commands and their children too."""

    def __init__(
        self,
        *,
        extra_env: Mapping[str, str] | None = None,
        shell: str = "bash",
        hidden: Iterable[str] = KEY_VARIABLES,
        sandbox: Confinement | None = None,
    ) -> None:
        self._env = command_env(hidden, extra_env)
        self._shell = shell
        self._background: list[asyncio.subprocess.Process] = []
        self.sandbox = sandbox

    def unconfined(self) -> LocalTerminal:
        """The same terminal outside the sandbox (its background jobs are shared)."""
        twin = LocalTerminal(shell=self._shell)
        twin._env, twin._background = self._env, self._background
        return twin

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        timeout: float,
        on_output: OutputCallback | None = None,
        max_output_bytes: int = 30_000,
    ) -> CommandResult:
        """See ``Terminal.run``. On timeout or cancel the whole process group is killed."""
        # Our own pipe rather than the subprocess transport's: the transport's wait()
        # also waits for its pipes to close, which a leftover background child can hold
        # open for as long as it lives; here wait() ends when the command does.
        proc, pipe = await self._spawn_piped(command, cwd)
        pump = _Pump(OutputWindow(tail_bytes=1, result_bytes=max_output_bytes), on_output)
        reader = asyncio.create_task(pump.read(pipe))
        try:
            timed_out = await _wait(proc, timeout)
            await _drain(reader, proc)
        except BaseException:
            _kill_group(proc)  # cancelled (or failed): nothing of the command may survive
            raise
        finally:
            await _reap(proc, reader)
            pipe.close()  # in case the reader was cancelled before it took the pipe over
        pump.raise_callback_error()
        return CommandResult(
            output=pump.window.result_text(),
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            output_chars=pump.chars,
            truncated=pump.window.truncated,
        )

    async def start_background(self, command: str, *, cwd: Path) -> BackgroundJob:
        """Start ``command`` detached from the call, its output appended to a log file."""
        fd, log_path = tempfile.mkstemp(prefix="toolwire-bg-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            proc = await self._spawn(command, cwd, log.fileno())
        self._background.append(proc)
        return BackgroundJob(pid=proc.pid, log_path=log_path)

    async def _spawn_piped(
        self, command: str, cwd: Path
    ) -> tuple[asyncio.subprocess.Process, BinaryIO]:
        """The command started with its output on a new pipe; the pipe's reading end."""
        read_fd, write_fd = os.pipe()
        try:
            proc = await self._spawn(command, cwd, write_fd)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        return proc, os.fdopen(read_fd, "rb", buffering=0)

    async def _spawn(self, command: str, cwd: Path, output: int) -> asyncio.subprocess.Process:
        """``bash -c command`` in a new session, stdout and stderr both to fd ``output``."""
        argv = [self._shell, "-c", command]
        if self.sandbox is not None:
            argv = await self.sandbox.wrap(argv, cwd)
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )

    async def aclose(self) -> None:
        """Kill every background command's process group and reap it."""
        jobs, self._background = self._background, []
        for proc in jobs:
            _kill_group(proc)
        for proc in jobs:
            await proc.wait()
        if self.sandbox is not None:
            await self.sandbox.aclose()


class _Pump:
    """Reads a pipe to EOF into an output window, handing each decoded chunk to a callback.

    A callback that raises is not called again (the pipe must keep draining or the
    command would block on a full pipe); its error is raised once the command is over.
    """

    def __init__(self, window: OutputWindow, on_output: OutputCallback | None) -> None:
        self.window = window
        self.chars = 0
        self._on_output = on_output
        self._error: Exception | None = None
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def read(self, pipe: BinaryIO) -> None:
        """Read ``pipe`` to EOF; it is closed afterwards, also on cancel."""
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), pipe
        )
        try:
            while data := await stream.read(_READ_SIZE):
                self._emit(self._utf8.decode(data))
            self._emit(self._utf8.decode(b"", final=True))
        finally:
            transport.close()

    def _emit(self, text: str) -> None:
        if not text:
            return
        self.window.append(text)
        self.chars += len(text)
        if self._on_output is None or self._error is not None:
            return
        try:
            self._on_output(text)
        except Exception as exc:
            self._error = exc

    def raise_callback_error(self) -> None:
        if self._error is not None:
            raise self._error


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    # The command is its process group's leader (start_new_session): killing the group
    # takes its children too, which would otherwise hold the output pipe open.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _wait(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait for the command to exit; True when it ran out of time and was killed."""
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        return True
    return False


async def _drain(reader: asyncio.Task[None], proc: asyncio.subprocess.Process) -> None:
    """Let the reader reach EOF; if a leftover child keeps the pipe open, kill the group."""
    try:
        await asyncio.wait_for(asyncio.shield(reader), _DRAIN_GRACE_S)
    except TimeoutError:
        _kill_group(proc)
        await reader


async def _reap(proc: asyncio.subprocess.Process, reader: asyncio.Task[None]) -> None:
    """Leave no process or task behind, even when the caller was cancelled."""
    if proc.returncode is None:
        _kill_group(proc)
        # Shielded so that a second cancel cannot leave a zombie behind.
        await asyncio.shield(proc.wait())
    if not reader.done():
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


__all__ = [
    "KEY_VARIABLES",
    "BackgroundJob",
    "CommandResult",
    "Confinement",
    "LocalTerminal",
    "OutputCallback",
    "Terminal",
    "command_env",
    "hidden_variables",
]
