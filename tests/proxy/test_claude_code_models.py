"""Claude Code's model picker lists the proxy's ``[proxy.aliases]`` (docs/proxy.md,
"Aliases and routing rules").

With ``CLAUDE_CODE_USE_GATEWAY=1`` (the proxy as its gateway: ``ANTHROPIC_BASE_URL`` plus
``ANTHROPIC_AUTH_TOKEN``, sent as a Bearer token) and
``CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1``, the pinned Claude Code asks the gateway
for ``GET /v1/models?limit=1000`` at start-up, keeps the ids that start with ``claude``
or ``anthropic`` (any case), and stores them as its picker's extra options
(``additionalModelOptionsCache`` in ``~/.claude.json``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.http import FakeServer, Received, Reply
from tests.proxy.support import openai_text_stream, running, write_config
from tests.proxy.test_claude_code import PACKAGE, RUN_TIMEOUT, _claude
from toolwire.proxy import load_settings

pytestmark = pytest.mark.e2e

TOKEN = "team-gateway-token"
CACHE = "additionalModelOptionsCache"
DISCOVERY_WAIT = 15.0
ALIASES = '[proxy.aliases]\n"claude-qwen-big" = "local,qwen3-big"\n"anthropic-up" = "claude"\n'


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def test_claude_code_lists_the_aliases_with_gateway_model_discovery(tmp_path: Path) -> None:
    if not PACKAGE.exists():
        pytest.skip("Claude Code is not installed (make claude-code)")
    command = _claude()
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    extra = f'token = "{TOKEN}"\n{ALIASES}'
    stored = home / ".claude.json"

    def answer(received: Received) -> Reply:
        # Claude Code fetches the list in the background at start-up: the answer to its
        # prompt waits for the list to be stored, or a quick run exits before that.
        deadline = time.monotonic() + DISCOVERY_WAIT
        while time.monotonic() < deadline and CACHE not in _read(stored):
            time.sleep(0.05)
        return Reply(chunks=openai_text_stream("hello"))

    with FakeServer(answer) as upstream:
        settings = load_settings(write_config(tmp_path, upstream.url, upstream.url, extra))
        with running(settings) as url:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(home),
                "ANTHROPIC_BASE_URL": url,
                "ANTHROPIC_AUTH_TOKEN": TOKEN,
                "CLAUDE_CODE_USE_GATEWAY": "1",
                "CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
            }
            done = subprocess.run(
                [*command, "-p", "hi", "--model", "local,qwen3", "--output-format", "json"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
    assert done.returncode == 0, f"claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    options = {o["value"]: o["label"] for o in json.loads(_read(stored))[CACHE]}
    assert options["claude-qwen-big"] == "qwen3-big (local)"
    assert options["anthropic-up"] == "claude-up (claude)"
    # A backend,model id that does not start with claude/anthropic is dropped by Claude
    # Code: that is why the aliases exist.
    assert "local,qwen3" not in options
