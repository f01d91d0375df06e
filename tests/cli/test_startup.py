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

import pytest

HEAVY = ("acp", "pydantic", "starlette", "uvicorn", "rich", "httpx", "httpx2", "asyncio")

_SPY = """
import json, runpy, sys

HEAVY = set(sys.argv[1].split(","))
importers = {}


class Spy:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in HEAVY and top not in importers:
            frame = sys._getframe(1)
            while frame.f_globals.get("__name__", "").startswith("importlib"):
                frame = frame.f_back
            importers[top] = frame.f_globals.get("__name__", "?")
        return None


sys.meta_path.insert(0, Spy())
sys.argv = ["toolwire", *sys.argv[2:]]
try:
    runpy.run_module("toolwire", run_name="__main__")
except SystemExit as e:
    assert not e.code, e.code
sys.stderr.write("\\n" + json.dumps(importers) + "\\n")
"""


def importers(*argv: str) -> dict[str, str]:
    """Each heavy package ``toolwire ARGV`` imported, and the module that imported it."""
    done = subprocess.run(
        [sys.executable, "-c", _SPY, ",".join(HEAVY), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, str] = json.loads(done.stderr.splitlines()[-1])
    return found


@pytest.mark.parametrize("command", ["decode", "updates"])
def test_stream_commands_load_no_sdk_server_http_client_or_terminal_ui(command: str) -> None:
    sample = resources.files("toolwire.samples").joinpath("anthropic_edit.sse")
    found = importers(command, str(sample))
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
