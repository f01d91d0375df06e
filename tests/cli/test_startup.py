"""A command imports only what it uses: ``toolwire decode`` never loads the ACP SDK.

Each run happens in a fresh interpreter that records, for every heavy third-party package,
the module whose code imported it first. Module sets, not timings: the times are in the
report of the change that made the commands lazy, and a loaded CI machine would make a
timed test flaky.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

HEAVY = (
    "acp",
    "pydantic",
    "starlette",
    "uvicorn",
    "rich",
    "httpx",
    "httpx2",
    "asyncio",
    "mcp",
    "mcp_types",
    "bs4",
)
FRAMEWORK = ("typer", "click")
"""The command-line framework: several times a bare interpreter's start-up, with pydantic."""

_SPY = """
import json, runpy, sys, threading

HEAVY = set(sys.argv[1].split(","))
importers = {}


class Spy:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in HEAVY and top not in importers:
            frame = sys._getframe(1)
            while frame.f_globals.get("__name__", "").startswith("importlib"):
                frame = frame.f_back
            main = threading.current_thread() is threading.main_thread()
            importers[top] = [frame.f_globals.get("__name__", "?"), main]
        return None


sys.meta_path.insert(0, Spy())
sys.argv = ["toolwire", *sys.argv[2:]]
try:
    runpy.run_module("toolwire", run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
sys.stderr.write("\\n" + json.dumps(importers) + "\\n")
"""


def spied(*argv: str, stdin: str = "", env: dict[str, str] | None = None) -> dict[str, Any]:
    """Each heavy package ``toolwire ARGV`` imported: [the module that imported it, whether
    that was on the main thread]."""
    done = subprocess.run(
        [sys.executable, "-c", _SPY, ",".join(HEAVY + FRAMEWORK), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stderr.splitlines()[-1])
    return found


def importers(*argv: str) -> dict[str, str]:
    """Each heavy package ``toolwire ARGV`` imported, and the module that imported it."""
    return {name: module for name, (module, _) in spied(*argv).items()}


SAMPLE = str(resources.files("toolwire.samples").joinpath("anthropic_edit.sse"))


@pytest.mark.parametrize(
    "argv",
    [
        ["decode"],
        ["decode", SAMPLE],
        ["decode", "--format", "anthropic", "--only=text_delta", "--chunk-size", "7", SAMPLE],
        ["decode", "-f", "anthropic", "--", SAMPLE],
    ],
)
def test_decode_loads_no_command_line_framework_or_pydantic(argv: list[str]) -> None:
    # A pipe starts `toolwire decode` for each stream: it runs on the standard library
    # and toolwire's decoders alone (typer and the pydantic it loads come to several
    # times a bare interpreter's start-up).
    assert importers(*argv) == {}


@pytest.mark.parametrize("command", ["decode", "updates"])
def test_stream_commands_load_no_sdk_server_http_client_or_terminal_ui(command: str) -> None:
    found = importers(command, SAMPLE)
    for name in FRAMEWORK:  # the typer application parses `updates`
        found.pop(name, None)
    # typer itself coerces option values through pydantic (typer._adapters); toolwire
    # must not be the one that loads it.
    pydantic = found.pop("pydantic", "typer")
    assert not pydantic.startswith("toolwire"), pydantic
    assert found == {}


def test_the_spy_sees_who_imports_what(tmp_path: Path) -> None:
    # `toolwire config` validates the configuration with pydantic models (typer, which
    # parses the options first, may be the one that loads pydantic).
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    found = importers("config", "--config", str(config))
    assert found["pydantic"].partition(".")[0] in {"typer", "toolwire"}


def test_acp_answers_initialize_on_a_thread_that_loads_neither_framework_nor_models(
    tmp_path: Path,
) -> None:
    # An editor shows the agent as starting until `initialize` is answered. The thread
    # that answers it loads no framework, no pydantic, no SDK: the configuration's models
    # and the SDK load on threads of their own meanwhile.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {}},
    }
    found = spied("acp", stdin=json.dumps(initialize) + "\n", env=env)
    on_main = {name: module for name, (module, main) in found.items() if main}
    assert on_main == {}  # not even asyncio: the first line is read with plain reads
    assert {"acp", "pydantic"} <= found.keys()  # loaded all the same, elsewhere


def test_a_session_loads_neither_the_mcp_sdk_nor_the_html_parser_before_it_needs_them(
    tmp_path: Path,
) -> None:
    # The MCP SDK's imports (its two protocol versions' models) were about a third of the
    # agent's start-up, the HTML parser and converter another 80 ms: a session loads them
    # when it runs an MCP server or converts its first page, not when it opens.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        },
    ]
    found = spied("acp", stdin="".join(json.dumps(m) + "\n" for m in lines), env=env)
    assert "acp" in found  # the session did open
    assert not {"mcp", "mcp_types", "bs4"} & found.keys(), found
