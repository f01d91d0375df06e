"""Claude Code on a 32k-token model through the proxy: scaled usage and compaction.

The real ``claude`` CLI (as in ``test_claude_code.py``) reads 30 files of 8 KB, one by
one, from a fake Anthropic-compatible upstream that enforces a 32,000-token window the
way Anthropic does: a request over it gets the real 400 body ("prompt is too long: N
tokens > M maximum"). The history outgrows the window several times over; the task must
complete with no request over the window reaching the upstream, the newest file and the
task in every request, and Claude Code must have been told usage as a share of its own
200k window.
"""

from __future__ import annotations

import json
import math
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.support import running, windowed_config
from tests.proxy.test_claude_code import _claude, _environment
from toolwire.context import window_for
from toolwire.proxy import load_settings
from toolwire.proxy.scale import CLAUDE_WINDOW, Scale
from toolwire.testing import streams

pytestmark = pytest.mark.e2e

WINDOW = 32_000
FILES = 30
FILE_BYTES = 8 * 1024
TASK = "Read each of the files f01.txt to f30.txt with the Read tool, one per turn."
DONE = "Read all 30 files."
RUN_TIMEOUT = 240


def _file(n: int) -> str:
    """File ``n``: numbered lines that say which file they are from."""
    lines = [f"f{n:02d} line {i:03d}: " + "abcdefghij" * 6 for i in range(200)]
    return "\n".join(lines)[:FILE_BYTES].rsplit("\n", 1)[0] + f"\nf{n:02d} ends here\n"


class WindowedUpstream:
    """An Anthropic-compatible model with a small window: it counts a token per 4 bytes
    of the body, refuses a request over ``window`` as Anthropic does, and otherwise
    calls ``Read`` on the next file until all are read (a summary request, Claude Code's
    own compaction, gets a summary)."""

    def __init__(self, project: Path, window: int) -> None:
        self.project = project
        self.window = window
        self.counted: list[int] = []
        self.refused: list[int] = []
        self.read = 0

    def __call__(self, received: Received) -> Reply:
        tokens = math.ceil(len(received.body) / 4)
        self.counted.append(tokens)
        if tokens > self.window:
            self.refused.append(tokens)
            message = f"prompt is too long: {tokens} tokens > {self.window} maximum"
            error = {"type": "invalid_request_error", "message": message}
            data = json.dumps({"type": "error", "error": error}).encode()
            return Reply(400, [data], content_type="application/json")
        if _asks_for_summary(received.json()):
            summary = f"<analysis>Reading files.</analysis>\n<summary>The task: {TASK} "
            summary += f"Files read so far: {self.read}.</summary>"
            return _reply(streams.text(summary), tokens)
        if self.read == FILES:
            return _reply(streams.text(DONE), tokens)
        self.read += 1
        path = str(self.project / f"f{self.read:02d}.txt")
        call = streams.tool_call(f"toolu_{self.read:02d}", "Read", {"file_path": path}, index=0)
        return _reply(call, tokens, "tool_use")


def _reply(events: list[Any], tokens: int, stop: str = "end_turn") -> Reply:
    end = streams.end("tool_use" if stop == "tool_use" else "end_turn", 5)
    # A message id of its own each: Claude Code joins assistant messages that share one.
    message_id = f"msg_{uuid.uuid4().hex}"
    payloads = streams.anthropic_payloads(
        [*events, end], model="claude-up", message_id=message_id, input_tokens=tokens
    )
    payloads[-2]["usage"]["input_tokens"] = tokens  # message_delta: the final count too
    return Reply(chunks=streams.sse_chunks(payloads))


def _last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if b.get("type") == "text")


def _asks_for_summary(body: dict[str, Any]) -> bool:
    """Whether this is Claude Code's own compaction: a summary of the conversation."""
    return "summary of the conversation" in _last_user_text(body)


def _project(tmp: Path, big: int | None = None) -> Path:
    """The project: ``FILES`` files of 8 KB; file ``big`` (if any) three times that."""
    project = tmp / "project"
    project.mkdir()
    for n in range(1, FILES + 1):
        text = _file(n) * (3 if n == big else 1)
        (project / f"f{n:02d}.txt").write_text(text, encoding="utf-8")
    return project


def _run(
    tmp: Path, project: Path, extra: str = "", env: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], WindowedUpstream, FakeServer, str]:
    """Claude Code doing ``TASK`` through the proxy against the windowed fake."""
    command = _claude()
    fake = WindowedUpstream(project, WINDOW)
    with FakeServer(respond=fake) as upstream:
        config = windowed_config(tmp, upstream.url, claude=WINDOW, extra=extra)
        with running(load_settings(config, default_backend="claude")) as url:
            done = subprocess.run(
                [
                    *command,
                    "-p",
                    TASK,
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--model",
                    "claude-sonnet-4-5",
                    "--tools",
                    "Read",
                    "--allowedTools",
                    "Read",
                    "--max-turns",
                    str(FILES + 5),
                ],
                cwd=project,
                env={**_environment(tmp, url), **(env or {})},
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
            metrics = httpx2.get(f"{url}/metrics", timeout=5).text
    assert done.returncode == 0, f"claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    result = events[-1]
    assert (result["type"], result["subtype"], result["is_error"]) == ("result", "success", False)
    assert result["result"] == DONE
    assert fake.read == FILES
    # No request over the window reached the upstream, and the history did outgrow it.
    assert fake.refused == []
    assert max(fake.counted) <= WINDOW
    assert sum(len(_file(n)) for n in range(1, FILES + 1)) / 4 > 1.5 * WINDOW
    return events, fake, upstream, metrics


def _check_requests(upstream: FakeServer) -> None:
    """Every request holds the task, and the one after each read the file whole."""
    for n, request in enumerate(upstream.requests):
        assert "f01.txt to f30.txt" in request.body.decode(), n
    for n in range(1, FILES + 1):
        after = [r.body.decode() for r in upstream.requests if f"toolu_{n:02d}" in r.body.decode()]
        assert after, n
        assert f"f{n:02d} ends here" in after[0], n
        assert f"f{n:02d} line 050" in after[0], n


def _check_usage(events: list[dict[str, Any]], fake: WindowedUpstream) -> None:
    """Claude Code was told usage as a share of its 200k window."""
    room = window_for("claude-up", context_window=WINDOW, max_tokens=8192).room
    scale = Scale(CLAUDE_WINDOW, room)
    told = [
        e["message"]["usage"]["input_tokens"]
        for e in events
        if e["type"] == "assistant" and e["message"].get("usage")
    ]
    assert told
    assert set(told) <= {scale(n) for n in fake.counted}
    assert max(told) > WINDOW  # more than a 32k window holds: it is scaled


def test_claude_code_compacts_in_time_on_scaled_usage(tmp_path: Path) -> None:
    # The proxy does not compact: Claude Code must, before a request overflows. It
    # compacts ahead only with a known auto-compact window (else it waits for "prompt
    # is too long"): its own 200k, which the scaled usage is a share of.
    project = _project(tmp_path)
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(CLAUDE_WINDOW)}
    events, fake, upstream, metrics = _run(tmp_path, project, "compaction = false", env)
    assert [r for r in upstream.requests if _asks_for_summary(r.json())]  # it compacted
    assert any(e.get("subtype") == "compact_boundary" for e in events)
    assert "toolwire_proxy_errors_total{" not in metrics  # never "prompt is too long"
    _check_requests(upstream)
    _check_usage(events, fake)


def test_claude_code_compacts_on_the_proxys_prompt_is_too_long(tmp_path: Path) -> None:
    # Compaction off and no auto-compact window: the proxy's 400 in Anthropic's words
    # makes Claude Code compact and go on.
    project = _project(tmp_path)
    events, fake, upstream, metrics = _run(tmp_path, project, "compaction = false")
    assert [r for r in upstream.requests if _asks_for_summary(r.json())]
    assert _metric(metrics, 'toolwire_proxy_errors_total{kind="invalid_request_error"}') >= 1
    _check_requests(upstream)
    _check_usage(events, fake)


def test_the_proxy_compacts_what_claude_code_did_not(tmp_path: Path) -> None:
    # File 6 is 24 KB: read near Claude Code's threshold, it jumps past the window.
    project = _project(tmp_path, big=6)
    events, fake, upstream, metrics = _run(tmp_path, project)
    assert _metric(metrics, 'toolwire_proxy_compactions_total{backend="claude"}') >= 1
    _check_requests(upstream)
    _check_usage(events, fake)


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0
