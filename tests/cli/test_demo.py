"""``toolwire demo``: pacing, the kept directory, and the whole run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.cli.demo_cmd import demo_agent, paced_cassette
from toolwire.samples import DEMO_CASSETTE


def _delays(path: Path) -> list[float]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row.get("chunk_delay_ms", 0) for row in rows]


def test_speed_scales_the_cassette_delays(tmp_path: Path) -> None:
    assert paced_cassette(1.0, tmp_path) == DEMO_CASSETTE
    original = _delays(DEMO_CASSETTE)
    assert _delays(paced_cassette(2.0, tmp_path)) == [d / 2 for d in original]
    assert _delays(paced_cassette(0.0, tmp_path)) == [0] * len(original)
    scaled = [json.loads(line) for line in (tmp_path / DEMO_CASSETTE.name).read_text().splitlines()]
    bodies = [json.loads(line)["body"] for line in DEMO_CASSETTE.read_text().splitlines()]
    assert [row["body"] for row in scaled] == bodies


def test_the_agent_command_is_isolated(tmp_path: Path) -> None:
    agent = demo_agent(tmp_path / "c.jsonl", tmp_path)
    assert agent.program == sys.executable
    assert agent.args[-4:] == (
        "--backend",
        f"replay:{tmp_path / 'c.jsonl'}",
        "--mode",
        "accept-edits",
    )
    assert agent.env["PATH"].startswith(str(Path(sys.executable).parent))
    assert Path(agent.env["TOOLWIRE_CONFIG"]).is_file()


def test_keep_refuses_a_directory_in_use(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(app, ["demo", "--plain", "--keep", str(tmp_path)])
    assert result.exit_code == 2
    assert "already exists and is not empty" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["file.txt"]


@pytest.mark.e2e
def test_demo_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip(
        "toolwire.agent.agent", reason="the agent server (toolwire acp) is not on this branch yet"
    )
    kept = tmp_path / "kept"
    result = CliRunner().invoke(app, ["demo", "--plain", "--speed", "0", "--keep", str(kept)])
    out = result.stdout
    assert result.exit_code == 0, out + result.stderr
    assert "  stop reason    end_turn\n" in out
    assert "✓ Edit textkit/slugify.py\n" in out
    assert "✓ tests pass afterwards: python -m unittest -q (6 tests, OK)\n" in out
    assert out.endswith("demo ok\n")
    assert ".lower()" in (kept / "textkit" / "slugify.py").read_text(encoding="utf-8")
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=kept, capture_output=True, timeout=60
    )
    assert tests.returncode == 0
