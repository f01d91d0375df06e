"""Running a session's Claude Code hooks (``toolwire.hooks``) at the agent's points.

``SessionHooks(session, runtime).run(event, tool_name, **fields)`` reads the settings
files afresh (a changed file is asked about again at once), asks about each project
file whose content the user has not trusted yet (the one permission path,
``Notifier.ask``; a yes is kept by content hash, a no for the rest of the session), runs
the matching commands side by side with the event's JSON on standard input, and returns
their ``Verdict``. Failures and timeouts are told to the user as notices. A command is
killed (its whole process group) on its timeout and when the turn is cancelled.

Hooks see what Claude Code hooks see: the built-in tools under the same names, MCP
tools as ``mcp__<server>__<tool>``, ``CLAUDE_PROJECT_DIR`` set to the session's
directory, no backend keys in the environment (as for ``Bash``), and
``transcript_path``: the session's history as JSON lines, written before the hooks run.

Bounded: a hook's standard output and error are read as they come and kept up to
``MAX_OUTPUT`` characters each (the rest is read and dropped, so a hook printing
hundreds of megabytes costs no memory and never blocks on a full pipe). What goes to a
hook (its input, the transcript) is UTF-8 with a lone surrogate as U+FFFD
(``toolwire.backends.utf8``): one bad character in the history never fails a hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import uuid
from pathlib import Path
from typing import Any, Final

from acp.schema import PermissionOption

from toolwire.agent.session.state import Runtime, Session
from toolwire.backends import utf8
from toolwire.history.jsonform import message_to_dict
from toolwire.hooks import (
    Event,
    HookCommand,
    Outcome,
    Source,
    TrustStore,
    Verdict,
    default_trust_path,
    hook_input,
    matches,
    read_sources,
    verdict,
)
from toolwire.tools.terminal import command_env, hidden_variables
from toolwire.updates.builders import tool_call, tool_call_update
from toolwire.updates.wire import text_content

log = logging.getLogger("toolwire.agent")

_TRUST: Final = "hooks_trust"
_SKIP: Final = "hooks_skip"
_CHOICES: Final = (
    PermissionOption(option_id=_TRUST, name="Trust this file and run them", kind="allow_always"),
    PermissionOption(option_id=_SKIP, name="Do not run them", kind="reject_once"),
)
_MODES: Final = {
    "ask": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "bypass": "bypassPermissions",
    "read-only": "default",
}
MAX_OUTPUT: Final = 64_000
"""Characters of a hook's output kept (a reason for the model stays a reason)."""
_MAX_BYTES: Final = 4 * MAX_OUTPUT  # a character is at most four bytes of UTF-8


class SessionHooks:
    """The hooks of one session, run at one point (module doc)."""

    __slots__ = ("runtime", "session", "store")

    def __init__(self, session: Session, runtime: Runtime, store: TrustStore | None = None):
        self.session = session
        self.runtime = runtime
        self.store = store or TrustStore()

    async def run(self, event: Event, tool_name: str | None = None, **fields: Any) -> Verdict:
        """Run the hooks of ``event`` that select ``tool_name``; what they decided."""
        session = self.session
        sources = await asyncio.to_thread(read_sources, session.who.cwd)
        commands: dict[str, HookCommand] = {}  # the same command line runs once
        for source in sources:
            if not any(g.event == event for g in source.groups) or not await self._trusted(source):
                continue
            for group in source.groups:
                if group.event == event and matches(group.matcher, tool_name):
                    commands.update((c.command, c) for c in group.commands)
        if not commands:
            return Verdict()
        transcript = await asyncio.to_thread(self._transcript)
        payload = hook_input(
            event,
            session_id=session.id,
            transcript_path=str(transcript),
            cwd=session.who.cwd,
            permission_mode=_MODES.get(session.rules.mode, "default"),
            **({"tool_name": tool_name} if tool_name is not None else {}),
            **fields,
        )
        stdin = utf8(json.dumps(payload, ensure_ascii=False))
        env = self._env()
        outcomes = await asyncio.gather(
            *(run_command(c, stdin, session.who.cwd, env) for c in commands.values())
        )
        result = verdict(event, outcomes)
        for line in result.shown:
            session.services.notifier.notice(line)
        return result

    async def _trusted(self, source: Source) -> bool:
        state = self.session.services.hook_state
        if self.store.trusted(source):
            return True
        if source.digest in state.declined:
            return False
        yes = await self._ask(source)
        if yes:
            await asyncio.to_thread(self.store.remember, source)
        else:
            state.declined.add(source.digest)
        return yes

    async def _ask(self, source: Source) -> bool:
        """Ask whether to run ``source``'s hooks (the commands on the card)."""
        session = self.session
        call_id = f"hooks-{uuid.uuid4().hex[:12]}"
        session.services.call_ids.add(call_id)
        await self.runtime.store.call(lambda db: db.add_call_ids(session.id, [call_id]))
        shown = "\n".join(f"- {line}" for line in source.commands())
        card = {
            "toolCallId": call_id,
            "title": f"Run the hooks in {source.path}?",
            "kind": "execute",
            "status": "pending",
            "content": [text_content(f"This project file runs these commands:\n{shown}")],
        }
        session.services.outbox.update(tool_call(card))
        yes = False
        try:
            yes = await session.services.notifier.ask(card, _CHOICES) == _TRUST
        finally:
            session.services.outbox.update(
                tool_call_update(call_id, status="completed" if yes else "failed")
            )
        log.info(
            "session %s: hooks in %s %s", session.id, source.path, "trusted" if yes else "declined"
        )
        return yes

    def _transcript(self) -> Path:
        """The session's history as JSON lines, where hooks can read it."""
        path = default_trust_path().parent / "transcripts" / f"{self.session.id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lines = (json.dumps(message_to_dict(m), ensure_ascii=False) for m in self.session.history)
        path.write_bytes(utf8("".join(f"{line}\n" for line in lines)))
        return path

    def _env(self) -> dict[str, str]:
        config = self.runtime.config
        keys = (b.api_key_env for b in config.backends.values() if b.api_key_env)
        hidden = hidden_variables(keys, config.tools.env_allow)
        return command_env(hidden, {"CLAUDE_PROJECT_DIR": self.session.who.cwd})


async def run_command(hook: HookCommand, stdin: bytes, cwd: str, env: dict[str, str]) -> Outcome:
    """Run one hook command with ``stdin``; killed with its children on timeout or cancel."""
    proc = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        hook.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,  # its own group: a timeout kills what it started too
    )
    try:
        out, err = await asyncio.wait_for(_talk(proc, stdin), hook.timeout)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return Outcome(hook.command, None, timeout=hook.timeout)
    except BaseException:
        _kill(proc)
        raise
    return Outcome(hook.command, proc.returncode, out, err, hook.timeout)


async def _talk(proc: asyncio.subprocess.Process, stdin: bytes) -> tuple[str, str]:
    """``stdin`` written, both outputs read to their end (kept up to ``MAX_OUTPUT``),
    the exit waited for."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    feeding = asyncio.create_task(_feed(proc.stdin, stdin))
    try:
        out, err = await asyncio.gather(_kept(proc.stdout), _kept(proc.stderr))
        await feeding
    finally:
        feeding.cancel()
    await proc.wait()
    return out, err


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it did not read it
        pipe.write(data)
        await pipe.drain()
    pipe.close()


async def _kept(stream: asyncio.StreamReader) -> str:
    """What ``stream`` gives, up to ``MAX_OUTPUT`` characters; the rest read and dropped."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < _MAX_BYTES:
            kept += chunk[: _MAX_BYTES - len(kept)]
    return kept.decode(errors="replace")[:MAX_OUTPUT]


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended already
        os.killpg(proc.pid, signal.SIGKILL)


__all__ = ["MAX_OUTPUT", "SessionHooks", "run_command"]
