"""A fake OpenAI-compatible server whose tool-call parser is broken, the ways users report.

Asked for native tool calls, it answers a Read -> Edit -> Bash task with each call as text,
never in ``tool_calls``, and ``finish_reason: "stop"``:

1. Read: Qwen3-Coder markup without its opening ``<tool_call>`` in ``content`` (Ollama's
   qwen3-coder, ollama/ollama#16686);
2. Edit: a Hermes call inside ``reasoning_content`` (llama.cpp and vLLM reasoning parsers
   that swallow it);
3. Bash: Llama's JSON as the whole of ``content`` (vllm-project/vllm#46863);
4. then a plain answer.

Which step a request is at is read from the request itself: the number of tool results it
carries (OpenAI ``role: "tool"`` messages), so the server keeps no state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.fakes.http import Received, Reply, sse

EDIT = {"file_path": "app.py", "old_string": "'hi'", "new_string": "'hello'"}


def leaks(path: str = "app.py") -> tuple[str, str, str]:
    """The three leaked answers (Read, Edit in the reasoning, Bash) for the file ``path``."""
    edit = {**EDIT, "file_path": path}
    read = (
        "Let me read the file first.\n"
        f"<function=Read>\n<parameter=file_path>\n{path}\n</parameter>\n</function>\n</tool_call>"
    )
    thinking = (
        "The user wants a friendlier greeting. Now the edit.\n"
        f"<tool_call>\n{json.dumps({'name': 'Edit', 'arguments': edit})}\n</tool_call>"
    )
    bash = json.dumps({"name": "Bash", "parameters": {"command": f"cat {path}"}})
    return read, thinking, bash


READ_LEAK, EDIT_THINKING, BASH_LEAK = leaks()
DONE = "Done: greet() now says hello."
_BASE = {"id": "chatcmpl-leak", "object": "chat.completion.chunk", "model": "qwen3-coder"}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
    return None, {**_BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def stream(content: str = "", reasoning: str = "", size: int = 9) -> Reply:
    """Text and reasoning in deltas of ``size`` characters, each its own body chunk."""
    events: list[tuple[None, Any]] = [_chunk({"role": "assistant", "content": ""})]
    for field, text in (("reasoning_content", reasoning), ("content", content)):
        events += [_chunk({field: text[i : i + size]}) for i in range(0, len(text), size)]
    events += [_chunk({}, "stop"), (None, "[DONE]")]
    return Reply(chunks=[sse([event]) for event in events])


def results_in(received: Received) -> int:
    """How many tool results the request carries (either dialect's)."""
    body = received.json()
    count = 0
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            count += 1
        content = message.get("content")
        if isinstance(content, list):
            count += sum(1 for b in content if b.get("type") == "tool_result")
    return count


def leaky_for(path: str) -> Callable[[Received], Reply]:
    """The server's answers for the task on the file ``path`` (as the client names it)."""
    read, thinking, bash = leaks(path)

    def respond(received: Received) -> Reply:
        step = results_in(received)
        if step == 0:
            return stream(read)
        if step == 1:
            return stream(reasoning=thinking)
        if step == 2:
            return stream(bash)
        return stream(DONE)

    return respond


leaky = leaky_for("app.py")
"""The Read -> Edit -> Bash task on ``app.py``, every call leaked as text."""


__all__ = [
    "BASH_LEAK",
    "DONE",
    "EDIT",
    "EDIT_THINKING",
    "READ_LEAK",
    "leaks",
    "leaky",
    "leaky_for",
    "stream",
]
