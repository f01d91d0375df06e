"""``[tools] env_allow``: checked like every other key, shown by ``toolwire config``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.config import ConfigError, load_config


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tools = 3", r": tools must be a table \(\[tools\]\); fix that section$"),
        (
            "[tools]\nenv_alow = []",
            r"unknown key 'env_alow' in \[tools\]; did you mean 'env_allow'",
        ),
        (
            "[tools]\nenv_allow = 'OPENAI_API_KEY'",
            r"tools.env_allow must be a list of environment variable names$",
        ),
        (
            "[tools]\nenv_allow = ['sk-proj-secret value']",
            r"tools.env_allow must list the NAMES of environment variables",
        ),
    ],
)
def test_env_allow_errors_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)
    assert "secret" not in str(info.value)  # a value put there by mistake is not echoed


def test_env_allow_is_read_and_shown_with_its_source(tmp_path: Path) -> None:
    path = _file(tmp_path, "[tools]\nenv_allow = ['OPENAI_API_KEY', 'HF_TOKEN']\n")
    cfg = load_config(path, environ={})
    assert cfg.tools.env_allow == ["OPENAI_API_KEY", "HF_TOKEN"]
    assert cfg.source("tools.env_allow") == str(path)
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "[tools]" in shown.output
    (line,) = [ln for ln in shown.output.splitlines() if ln.startswith("env_allow")]
    assert '["OPENAI_API_KEY", "HF_TOKEN"]' in line
    assert f"({path})" in line
    empty = _file(tmp_path, "")
    default = CliRunner().invoke(app, ["config", "--config", str(empty)])
    assert "env_allow = [] (default)" in " ".join(default.output.split())
