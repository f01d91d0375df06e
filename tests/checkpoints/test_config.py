"""``[checkpoints]``: read from the file, checked, and shown by ``toolwire config``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.checkpoints import DEFAULT_MAX_FILE_BYTES
from toolwire.cli import app
from toolwire.config import ConfigError, load_config


def test_defaults_and_the_files_values(tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    defaults = load_config(empty, environ={}).checkpoints
    assert (defaults.enabled, defaults.keep, defaults.max_file_bytes) == (
        True,
        50,
        DEFAULT_MAX_FILE_BYTES,
    )
    path = tmp_path / "config.toml"
    path.write_text("[checkpoints]\nkeep = 10\nmax_file_bytes = 1_000\n")
    cfg = load_config(path, environ={})
    assert (cfg.checkpoints.keep, cfg.checkpoints.max_file_bytes) == (10, 1000)
    assert cfg.source("checkpoints.keep") == str(path)
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    section = shown.output.split("[checkpoints]\n", 1)[1].split("\n\n", 1)[0]
    assert " ".join(section.split()) == (
        f"enabled = true (default) keep = 10 ({path}) max_file_bytes = 1000 ({path})"
    )


def test_a_bad_value_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[checkpoints]\nkeep = 0\n")
    with pytest.raises(ConfigError, match=r"checkpoints\.keep") as info:
        load_config(path, environ={})
    assert "\n" not in str(info.value)
