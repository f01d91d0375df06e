"""The switch-aware rewrite: the handoff block on every later request, byte-identical."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2

from tests.fakes.http import FakeServer, Reply
from tests.proxy.support import (
    FILE_TEXT,
    anthropic_stream,
    anthropic_text_stream,
    compact_json,
    message_text,
    openai_text_stream,
    post_messages,
    read_turn,
    running,
    settings_for,
)
from toolwire.config.schema import HandoffConfig
from toolwire.history import Message, TextPart, ThinkingPart, ToolCallPart, ToolResultPart
from toolwire.proxy.provenance import part_keys
from toolwire.proxy.rewrite import rewrite
from toolwire.proxy.state import SessionState, switch_point

B_TEXT = "1\tprint('b')\n"


def test_rewrite_is_byte_identical_on_later_requests(tmp_path: Path) -> None:
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        openai_up.script(Reply(chunks=openai_text_stream("ok")))
        anthropic_up.script(*[Reply(chunks=anthropic_text_stream("fine")) for _ in range(2)])
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        with running(settings) as url:
            history: list[dict[str, Any]] = [{"role": "user", "content": "Read src/a.py"}]
            history += read_turn("call_a", "src/a.py", FILE_TEXT)
            history += [{"role": "user", "content": "Now src/b.py"}]
            history += read_turn("call_b", "src/b.py", B_TEXT)
            history += [{"role": "user", "content": "What did a.py say?"}]
            post_messages(url, history)  # on the default backend, before the switch
            httpx2.post(f"{url}/control/switch", json={"backend": "claude", "session": "sess-1"})
            history += [
                {"role": "assistant", "content": "It returns 42."},
                {"role": "user", "content": "And b.py?"},
            ]
            post_messages(url, history)  # the switch: the first request to claude
            history += [
                {"role": "assistant", "content": [{"type": "text", "text": "It prints b."}]},
                {"role": "user", "content": [{"type": "text", "text": "Thanks."}]},
            ]
            post_messages(url, history)
    first, second = (r.json() for r in anthropic_up.requests)
    # The first request's messages are a prefix of the second's, byte for byte.
    n = len(first["messages"])
    assert compact_json(second["messages"][:n]) == compact_json(first["messages"])
    assert compact_json(second["system"]) == compact_json(first["system"])
    assert len(second["messages"]) == n + 2
    block = message_text(first["messages"][0]["content"])
    assert block.startswith("[TOOLWIRE HANDOFF]")
    assert FILE_TEXT in block  # the file read before the switch, verbatim
    assert "tool_use" not in compact_json(first["messages"][:1])


def test_rewrite_keeps_only_the_new_backends_thinking() -> None:
    history = [
        Message("user", (TextPart("go"),)),
        Message(
            "assistant",
            (ThinkingPart("old", "sig-old"), ToolCallPart("c1", "Read", {"file_path": "a"})),
        ),
        Message("tool", (ToolResultPart("c1", "Read", FILE_TEXT),)),
        Message("user", (TextPart("next"),)),
        Message("assistant", (ThinkingPart("mine", "sig-new"), TextPart("ok"))),
        Message("user", (TextPart("more"),)),
    ]
    state = SessionState(last_backend="claude", conversation=switch_point(4, "claude"))
    # Both turns came through the proxy from claude: only the one after the switch point
    # keeps its thinking (the rewrite changed what the earlier one was produced after).
    state.remember(part_keys(history[1]) + part_keys(history[4]), "claude")
    limits = HandoffConfig(keep_last=1)
    view, changed = rewrite(history, state, "claude", limits)
    assert changed
    point = state.conversation.point
    assert point is not None
    assert point.head is not None  # built, for the head before it
    again, changed_again = rewrite(history, state, "claude", limits)
    assert again == view
    assert not changed_again
    messages = view.messages
    assert [m.backend for m in messages if m.role == "assistant"] == ["claude"]
    assert messages[-2].parts[0] == ThinkingPart("mine", "sig-new")
    assert FILE_TEXT in messages[0].text()
    assert view.start == 4


def test_turns_are_attributed_to_their_recorded_producer() -> None:
    ours = Message("assistant", (ToolCallPart("toolu_1", "Read", {}),))
    unknown = Message("assistant", (ToolCallPart("call_9", "Read", {}),))
    history = [Message("user", (TextPart("hi"),)), ours, unknown]
    state = SessionState()
    state.remember(part_keys(ours), "local")
    view, changed = rewrite(history, state, "local", HandoffConfig())
    assert not changed
    assert [m.backend for m in view.messages] == [None, "local", None]


THOUGHT = {"type": "thinking", "thinking": "plan", "signature": "sig-claude"}


def test_thinking_goes_back_only_to_its_producer(tmp_path: Path) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    answer = [THOUGHT, {"type": "text", "text": "done"}]
    with FakeServer() as openai_up, FakeServer() as anthropic_up:
        anthropic_up.script(
            Reply(chunks=anthropic_stream(answer, "end_turn")),
            *[Reply(chunks=anthropic_text_stream("ok")) for _ in range(2)],
        )
        openai_up.script(Reply(chunks=openai_text_stream("ok")))
        settings = settings_for(tmp_path, openai_up.url, anthropic_up.url)
        with running(settings) as url:
            switch = f"{url}/control/switch"
            httpx2.post(switch, json={"backend": "claude", "session": "sess-1"})
            post_messages(url, history)  # claude answers with its thinking
            history += [{"role": "assistant", "content": answer}]
            history += [{"role": "user", "content": "again"}]
            post_messages(url, history)  # claude gets its own thinking back
            httpx2.post(switch, json={"backend": "local", "session": "sess-1"})
            post_messages(url, history)
            httpx2.post(switch, json={"backend": "claude", "session": "sess-1"})
            post_messages(url, history)
    _, own, back = (r.json() for r in anthropic_up.requests)
    assert own["messages"][1]["content"][0] == THOUGHT
    assert "sig-claude" not in openai_up.requests[0].body.decode()
    assert "reasoning_content" not in openai_up.requests[0].body.decode()
    # Back on claude after two switches: that turn is now before the switch point, whose
    # history was rewritten, so its thinking would no longer verify: it is not sent.
    assert "sig-claude" not in compact_json(back)


def test_a_history_rewritten_before_the_switch_gets_its_own_summary() -> None:
    # The client may change what came before the switch point (an edited or rewound
    # turn, the same length or longer): the summary is of the history as it is now,
    # never the one cached for another conversation at the same index.
    def history(task: str) -> list[Message]:
        return [
            Message("user", (TextPart(task),)),
            Message("assistant", (TextPart("On it."),)),
            Message("user", (TextPart("Carry on."),)),
            Message("assistant", (TextPart("Done."),)),
            Message("user", (TextPart("And now?"),)),
        ]

    state = SessionState(last_backend="claude", conversation=switch_point(4, "claude"))
    limits = HandoffConfig(keep_last=1)
    first, _ = rewrite(history("Fix the parser in src/parse.py"), state, "claude", limits)
    assert "Fix the parser" in first.messages[0].text()
    again, changed = rewrite(history("Write the README"), state, "claude", limits)
    assert changed
    assert "Write the README" in again.messages[0].text()
    assert "Fix the parser" not in again.messages[0].text()
