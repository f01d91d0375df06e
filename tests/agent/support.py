"""Harness for ``toolwire acp``: cassettes, a scripted SDK client, wire checks.

``agent(...)`` serves the agent that ``toolwire acp ARGS`` would run to the official SDK
client inside the test's process (``toolwire.testing.connect_in_memory``);
``spawn_agent(...)`` spawns ``python -m toolwire acp`` with the SDK's
``spawn_agent_process`` (a trimmed environment pointing HOME and the XDG directories into
the test's tmp_path). Both capture every message the agent writes with an SDK observer.
``check_wire`` validates them against the official ACP v1 JSON Schema: each
``session/update``'s params against ``#/$defs/SessionNotification``, each response
against the ``*Response`` definition of the request it answers, each request the agent
makes against its ``*Request`` definition, each error against ``Error``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import httpx2
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    Implementation,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.acp_check import schema, unstable_validator
from toolwire.agent.agent import ToolwireAgent
from toolwire.agent.protocol.outbox import LineSink
from toolwire.agent.store.worker import StoreWorker
from toolwire.config import load_config
from toolwire.events import Event, StopReason
from toolwire.testing import InMemoryConnection, connect_in_memory, streams

_URI = "urn:toolwire-tests:acp-schema-v1-e2e"
RESPONSES = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/list": "ListSessionsResponse",
    "session/close": "CloseSessionResponse",
    "session/delete": "DeleteSessionResponse",
    # Not in the v1 schema (unstable); the answer has the shape of session/new's.
    "session/fork": "NewSessionResponse",
    "session/set_mode": "SetSessionModeResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "session/prompt": "PromptResponse",
    "_toolwire/session/rewind": "ExtResponse",
}
# Unstable methods, checked against the unstable v1 schema.
UNSTABLE_RESPONSES = {
    "providers/list": "ListProvidersResponse",
    "providers/set": "SetProviderResponse",
    "providers/disable": "DisableProviderResponse",
}
REQUESTS = {
    "session/request_permission": "RequestPermissionRequest",
    "elicitation/create": "CreateElicitationRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
    "terminal/release": "ReleaseTerminalRequest",
}


# -- cassettes: Anthropic Messages SSE bodies ------------------------------------------


def answer(*blocks: tuple[Any, ...], stop: StopReason | None = None) -> list[Event]:
    """What a model says, as events. Blocks: ``("text", s)`` (one delta per word),
    ``("thinking", s)`` (signed), ``("tool", name, args, id)`` (arguments in 7-character
    pieces). ``stop`` defaults to tool_use / end_turn."""
    out: list[Event] = []
    calls = 0
    for block in blocks:
        if block[0] == "text":
            out += streams.text(block[1], by_word=True)
        elif block[0] == "thinking":
            out += streams.thinking(block[1], "sig-test")
        else:
            _, name, args, call_id = block
            out += streams.tool_call(call_id, name, args, index=calls, piece=7)
            calls += 1
    out.append(streams.end(stop or ("tool_use" if calls else "end_turn"), 20))
    return out


def response(*blocks: tuple[Any, ...], stop: StopReason | None = None, n: int = 0) -> str:
    """``answer(*blocks)`` as an Anthropic streaming body (a cassette line's)."""
    return streams.anthropic_sse(answer(*blocks, stop=stop), message_id=f"msg_{n}").decode()


# -- the scripted client ----------------------------------------------------------------


@dataclass
class Terminal:
    proc: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    released: bool = False


class ScriptedClient:
    """An ACP client (the SDK's ``Client`` protocol) that records and answers as told."""

    def __init__(self, *, answers: Iterable[str] = (), fs: bool = False, terminal: bool = False):
        self.updates: list[tuple[str, Any]] = []
        self.answers = list(answers)
        self.permissions: list[Any] = []
        self.fs = fs
        self.terminal = terminal
        self.terminals: dict[str, Terminal] = {}
        self.fs_calls: list[tuple[str, str]] = []
        self.on_update: Callable[[Any], None] | None = None
        self.on_permission: Callable[[], None] | None = None
        self.cancelled = asyncio.Event()
        #: ``elicitation/create`` requests received (params as sent) and the answer given.
        self.elicitations: list[dict[str, Any]] = []
        self.elicit_answer: dict[str, Any] = {"action": "decline"}

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        if self.on_update is not None:
            self.on_update(update)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call)
        if self.on_permission is not None:
            self.on_permission()
        choice = self.answers.pop(0) if self.answers else "cancelled"
        if choice == "wait":  # like an editor: answer "cancelled" once the user cancels
            await self.cancelled.wait()
        if choice in ("cancelled", "wait"):
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def read_text_file(
        self, path: str, session_id: str, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.fs_calls.append(("read", path))
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.fs_calls.append(("write", path))
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        proc = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        term = Terminal(proc)
        term.reader = asyncio.create_task(_pump(proc, term.output))
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = term
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        term = self.terminals[terminal_id]
        code = await term.proc.wait()
        if term.reader is not None:
            await term.reader
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        term = self.terminals[terminal_id]
        code = term.proc.returncode
        status = None if code is None else TerminalExitStatus(exit_code=code if code >= 0 else None)
        return TerminalOutputResponse(
            output=term.output.decode(errors="replace"), truncated=False, exit_status=status
        )

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        term = self.terminals[terminal_id]
        if term.proc.returncode is None:
            os.killpg(term.proc.pid, 9)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.terminals[terminal_id].released = True
        return ReleaseTerminalResponse()

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicitations.append(
            {"message": message, **mode.model_dump(mode="json", by_alias=True, exclude_none=True)}
        )
        return self.elicit_answer

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        pass

    def of_kind(self, kind: str) -> list[Any]:
        """The updates of one ``sessionUpdate`` kind, as SDK models."""
        return [u for _, u in self.updates if u.session_update == kind]


async def _pump(proc: asyncio.subprocess.Process, into: bytearray) -> None:
    assert proc.stdout is not None
    while chunk := await proc.stdout.read(4096):
        into += chunk


# -- spawning and checking ------------------------------------------------------------


@dataclass
class SpawnedAgent:
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    wire: list[StreamEvent]
    log: Path

    def sent(self) -> list[dict[str, Any]]:
        """Every message the agent wrote, in order."""
        return [e.message for e in self.wire if e.direction == StreamDirection.INCOMING]

    def notifications(self) -> list[dict[str, Any]]:
        return [m for m in self.sent() if m.get("method") == "session/update"]


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A trimmed environment whose HOME and XDG directories are inside ``tmp_path``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        # Commands as the user runs them: these tests look at pids, signals and the
        # questions a command asks; the sandbox's own tests (tests/sandbox) turn it on.
        "TOOLWIRE_SANDBOX": "off",
    }
    for key in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env | extra


@asynccontextmanager
async def agent(
    tmp_path: Path,
    client: ScriptedClient,
    *args: str,
    env: dict[str, str] | None = None,
    http: httpx2.AsyncClient | None = None,
) -> AsyncIterator[InMemoryConnection]:
    """The agent of ``toolwire acp ARGS``, in this process, driven by the SDK client.

    ARGS: ``--backend``, ``--config``, ``--mode``, ``--record``; ``env`` (default:
    ``environment(tmp_path)``) is in force while it runs, as for a spawned agent. ``http``:
    the client its backends send with (a ``FunctionBackend``'s transport, say).
    """
    options = dict(zip(args[::2], args[1::2], strict=True))
    with _environ(env or environment(tmp_path)):
        config_file = options.get("--config")
        config = load_config(
            Path(config_file) if config_file else None,
            backend=options.get("--backend"),
            mode=options.get("--mode"),
        )
        record = options.get("--record")

        def make(sink: LineSink) -> ToolwireAgent:
            return ToolwireAgent(config, StoreWorker(), sink, record=record, http=http)

        # A partial client (see spawn_agent): the SDK routes by name.
        async with connect_in_memory(make, client) as pair:  # type: ignore[arg-type]
            yield pair


@contextmanager
def _environ(env: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@asynccontextmanager
async def spawn_agent(
    tmp_path: Path, client: ScriptedClient, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[SpawnedAgent]:
    """``python -m toolwire acp ARGS`` driven through the official SDK client."""
    wire: list[StreamEvent] = []
    log = tmp_path / f"agent-{len(list(tmp_path.glob('agent-*.log')))}.log"
    with log.open("wb") as stderr:
        # The SDK finds each handler by name (a client serves only what it advertised); its
        # Client protocol lists every method, so a partial client needs this one ignore.
        async with spawn_agent_process(
            client,  # type: ignore[arg-type]
            sys.executable,
            "-m",
            "toolwire",
            "acp",
            *args,
            env=env or environment(tmp_path),
            transport_kwargs={"stderr": stderr.fileno()},
            observers=[wire.append],
        ) as (conn, process):
            yield SpawnedAgent(conn, process, wire, log)


@cache
def _validator(definition: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resource(_URI, Resource.from_contents(schema()))
    return Draft202012Validator({"$ref": f"{_URI}#/$defs/{definition}"}, registry=registry)


def _valid(definition: str, value: Any) -> None:
    errors = sorted(_validator(definition).iter_errors(value), key=str)
    assert not errors, f"{definition}: {errors[0].message} in {json.dumps(value)[:400]}"


def check_update(session_id: str, update: dict[str, Any]) -> None:
    """One ``session/update`` payload (as a client SDK delivered it) against the schema."""
    _valid("SessionNotification", {"sessionId": session_id, "update": update})


def check_wire(wire: list[StreamEvent]) -> int:
    """Validate every message the agent wrote; returns how many were checked."""
    asked: dict[Any, str] = {}
    opened: set[str] = set()
    checked = 0
    for event in wire:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                asked[message["id"]] = message["method"]
            if message.get("method") in ("session/load", "session/resume"):
                opened.add(message["params"]["sessionId"])  # load replays before answering
            continue
        assert message.get("jsonrpc") == "2.0"
        json.dumps(message, allow_nan=False)
        method = message.get("method")
        if method == "session/update":
            _valid("SessionNotification", message["params"])
            assert message["params"]["sessionId"] in opened, "update before its session exists"
        elif method is not None:
            _valid(REQUESTS[method], message["params"])
        elif "error" in message:
            _valid("Error", message["error"])
        else:
            answered = asked.get(message.get("id"))
            if answered in UNSTABLE_RESPONSES:
                errors = list(
                    unstable_validator(UNSTABLE_RESPONSES[answered]).iter_errors(message["result"])
                )
                assert not errors, f"{answered}: {errors[0].message}"
            else:
                _valid(RESPONSES[answered or ""], message["result"])
            if answered in ("session/new", "session/fork"):
                opened.add(message["result"]["sessionId"])
        checked += 1
    return checked


def calls_by_id(notifications: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The client's view of each tool call after all updates (ACP replace semantics)."""
    calls: dict[str, dict[str, Any]] = {}
    for note in notifications:
        update = note["params"]["update"]
        kind = update["sessionUpdate"]
        if kind == "tool_call":
            calls[update["toolCallId"]] = {k: v for k, v in update.items() if k != "sessionUpdate"}
        elif kind == "tool_call_update":
            assert update["toolCallId"] in calls, "update for a call the client never saw"
            calls[update["toolCallId"]].update(
                {k: v for k, v in update.items() if k != "sessionUpdate"}
            )
    return calls


def text_of(notifications: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    return "".join(
        n["params"]["update"]["content"]["text"]
        for n in notifications
        if n["params"]["update"]["sessionUpdate"] == kind
    )


def one_message_id_per_message(notes: list[dict[str, Any]]) -> None:
    """Adjacent text chunks share a messageId; each model response gets a new one."""
    ids: list[str] = []
    for note in notes:
        update = note["params"]["update"]
        if update["sessionUpdate"] == "agent_message_chunk":
            assert update.get("messageId"), "text chunk without messageId"
            if not ids or ids[-1] != update["messageId"]:
                assert update["messageId"] not in ids, "a messageId came back after another"
                ids.append(update["messageId"])
    assert len(ids) >= 3


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs after up to 2 s (a zombie counts as dead)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:  # a zombie is dead too: it only waits for its parent
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().split(") ", 1)[1].startswith("Z"):
                    return False
        except OSError:
            return False
        time.sleep(0.05)
    return True


APP = "def greet():\n    return 'hi'\n"


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text(APP, encoding="utf-8")
    return root


def full_turn_answers() -> list[list[Event]]:
    """A model that reads app.py, edits it, runs a command on it, then says it is done."""
    edit = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hello'"}
    return [
        answer(
            ("thinking", "The user wants a friendlier greeting."),
            ("text", "Let me read the file first."),
            ("tool", "Read", {"file_path": "app.py"}, "toolu_read"),
        ),
        answer(("text", "Now the edit."), ("tool", "Edit", edit, "toolu_edit")),
        answer(("tool", "Bash", {"command": "cat app.py"}, "toolu_bash")),
        answer(("text", "Done: greet() now says hello.")),
    ]


def full_turn_cassette(tmp_path: Path) -> Path:
    """``full_turn_answers`` as a replay cassette."""
    bodies = [
        streams.anthropic_sse(answer, message_id=f"msg_{n}")
        for n, answer in enumerate(full_turn_answers())
    ]
    return streams.write_cassette(tmp_path / "turn.jsonl", bodies)


async def start(conn: Any, cwd: Path, caps: ClientCapabilities | None = None) -> str:
    init = await conn.initialize(
        protocol_version=PROTOCOL_VERSION,
        client_capabilities=caps or ClientCapabilities(),
        client_info=Implementation(name="toolwire-tests", version="0"),
    )
    assert init.protocol_version == 1
    assert init.agent_info.name == "toolwire"
    assert init.agent_capabilities.load_session is True
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return str(session.session_id)


#: The API key the fake backends expect (read from ``TEST_KEY``); never shown to a user.
KEY = "sk-test-0123456789abcdefghij"


def fake_backend(url: str) -> str:
    """A config whose default backend is an Anthropic-compatible server at ``url``."""
    return (
        'default_backend = "fake"\n[backends.fake]\nprovider = "anthropic"\n'
        f'model = "claude-test"\nbase_url = "{url}"\napi_key_env = "TEST_KEY"\n'
    )


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def check_full_turn(root: Path, notes: list[dict[str, Any]], client: ScriptedClient) -> None:
    """What ``full_turn_cassette`` must look like on the wire: Read, Edit, Bash, done."""
    calls = calls_by_id(notes)
    assert list(calls) == ["toolu_read", "toolu_edit", "toolu_bash"]
    assert all(c["status"] == "completed" for c in calls.values())
    read, edit, bash = calls.values()
    assert (read["title"], read["kind"]) == ("Read app.py", "read")
    assert read["locations"][0]["path"] == str(root / "app.py")
    assert "return 'hi'" in read["content"][0]["content"]["text"]
    assert (edit["title"], edit["kind"]) == ("Edit app.py", "edit")
    # The line the edit changed (``return 'hello'``), from the tool, on the wire.
    assert edit["locations"] == [{"path": str(root / "app.py"), "line": 2}]
    diff = edit["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(root / "app.py"),
        "oldText": APP,
        "newText": APP.replace("'hi'", "'hello'"),
    }
    assert (bash["title"], bash["kind"]) == ("cat app.py", "execute")
    assert "return 'hello'" in bash["content"][0]["content"]["text"]
    assert bash["rawOutput"]["exit_code"] == 0
    assert "Done: greet() now says hello." in text_of(notes)
    assert "friendlier" in text_of(notes, "agent_thought_chunk")
    one_message_id_per_message(notes)
    # the permission requests came after their tool_call, and carried no content
    assert [p.tool_call_id for p in client.permissions] == ["toolu_edit", "toolu_bash"]
    assert all(p.content is None for p in client.permissions)


def uncached(value: Any) -> Any:
    """A request body (or part) without prompt-cache markers: they move with the
    request's end, so two requests that hold the same history compare equal without them."""
    if isinstance(value, dict):
        return {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [uncached(v) for v in value]
    return value
