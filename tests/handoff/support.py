"""Building histories for handoff tests in a line each, and a scripted summarizer."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Any

from toolwire.backends.base import ModelRequest
from toolwire.events import Event, MessageEnd, StreamError, TextDelta
from toolwire.handoff import Handoff, ItemReport
from toolwire.history import Message, Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart

CWD = "/proj"


class Session:
    """A history under construction: ``user``, ``say`` and ``run`` append messages."""

    def __init__(self, backend: str = "a") -> None:
        self.messages: list[Message] = []
        self.backend = backend
        self.n = 0

    def user(self, text: str) -> Session:
        self.messages.append(Message("user", (TextPart(text),)))
        return self

    def say(
        self, text: str, *, thinking: str | None = None, signature: str | None = None
    ) -> Session:
        parts: list[Part] = []
        if thinking is not None:
            parts.append(ThinkingPart(thinking, signature))
        parts.append(TextPart(text))
        self.messages.append(Message("assistant", tuple(parts), self.backend))
        return self

    def run(
        self, name: str, args: dict[str, Any], result: str | None, *, error: bool = False
    ) -> Session:
        """One assistant call and (unless ``result`` is None: interrupted) its result."""
        self.n += 1
        call = ToolCallPart(f"call_{self.n}", name, args)
        self.messages.append(Message("assistant", (call,), self.backend))
        if result is not None:
            self.messages.append(Message("tool", (ToolResultPart(call.id, name, result, error),)))
        return self

    def read(self, path: str, content: str, **extra: Any) -> Session:
        return self.run("Read", {"file_path": path, **extra}, content)

    def bash(self, command: str, output: str, *, error: bool = False) -> Session:
        return self.run("Bash", {"command": command}, output, error=error)


def by_label(items: Sequence[ItemReport], tool: str) -> list[tuple[str, str, str | None]]:
    """(label, status, reason) of the items of one tool, in order."""
    return [(r.item.label, r.status, r.reason) for r in items if r.item.tool == tool]


def shown(handoff: Handoff) -> list[ItemReport]:
    return [r for r in handoff.items if r.status in ("kept", "truncated")]


class ScriptedSummarizer:
    """A backend that answers each request from a script and records what it was asked."""

    provider = "fake"
    model = "summarizer-1"

    def __init__(self, *answers: str | Exception | None, name: str = "sum") -> None:
        self.name = name
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncGenerator[Event, None]:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            yield StreamError("connection reset")
            yield MessageEnd("error")
            return
        for i in range(0, len(answer), 7):
            yield TextDelta(answer[i : i + 7])
        yield MessageEnd("end_turn")


ANTHROPIC_MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "<system-reminder>ctx</system-reminder>Read the design doc."},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Let me read it.", "signature": "EqQBsig"},
            {"type": "text", "text": "Reading."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "Read",
                "input": {"file_path": "/p/DESIGN.md"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": [{"type": "text", "text": "1\t# Design"}],
            },
            {"type": "text", "text": "Now run the tests."},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_use", "id": "toolu_02", "name": "Bash", "input": {"command": "pytest"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": "exit 1",
                "is_error": True,
            }
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Tests fail."}]},
]


OPENAI_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": [{"type": "text", "text": "Read the design doc."}]},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "I should read it.",
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "Read", "arguments": '{"file_path": "/p/DESIGN.md"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": "1\t# Design"},
    {"role": "tool", "tool_call_id": "call_b", "content": "DESIGN.md"},
    {
        "role": "assistant",
        "content": "Read it.",
        "tool_calls": [
            {
                "id": "call_c",
                "type": "function",
                "function": {"name": "Grep", "arguments": "{bad json"},
            }
        ],
    },
    {"role": "user", "content": "Thanks."},
]


def sample(*, reverse_args: bool = False) -> list[Message]:
    s = Session().user("Fix the parser, please.").say("Looking.")
    s.read("src/parser.py", "def parse():\n    return 1\n")
    s.run(
        "Grep",
        {"pattern": "parse", "path": "src", "output_mode": "content", "-i": True},
        "src/parser.py:1",
    )
    s.run(
        "Edit",
        {"file_path": "src/parser.py", "old_string": "1", "new_string": "2"},
        "Edited src/parser.py",
    )
    s.bash("pytest -q", "1 passed")
    s.bash("git status", "modified: src/parser.py")
    s.run("Glob", {"pattern": "**/*.py"}, "src/parser.py")
    s.user("Thanks. Now the docs.").say("On it.")
    messages = s.messages
    if reverse_args:  # the same calls with their arguments in the opposite key order
        messages = [
            Message(
                m.role,
                tuple(
                    ToolCallPart(p.id, p.name, dict(reversed(list(p.arguments.items()))))
                    if isinstance(p, ToolCallPart)
                    else p
                    for p in m.parts
                ),
                m.backend,
            )
            for m in messages
        ]
    return messages
