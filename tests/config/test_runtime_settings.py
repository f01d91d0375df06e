"""The ``[limits]`` table reaches the runtime types through one ``from_config`` each, and
their defaults are the table's (one place to change a default)."""

from __future__ import annotations

import logging
from dataclasses import fields
from pathlib import Path

import pytest

from toolwire.backends.base import HTTPSettings
from toolwire.config import load_config
from toolwire.config.schema import ConfigError, LimitsConfig
from toolwire.tools.context import ToolLimits
from toolwire.updates.output import cap_text


def test_the_runtime_defaults_are_the_configs_defaults() -> None:
    assert ToolLimits.from_config(LimitsConfig()) == ToolLimits()
    assert HTTPSettings.from_config(LimitsConfig()) == HTTPSettings()


def test_configured_limits_reach_the_tools_and_the_http_client() -> None:
    limits = LimitsConfig(
        connect_timeout=3.5,
        read_timeout=7.5,
        max_retries=1,
        command_timeout=9.0,
        max_tool_output_bytes=1234,
    )
    tools = ToolLimits.from_config(limits)
    assert (tools.output_max_bytes, tools.bash_default_timeout_s) == (1234, 9.0)
    http = HTTPSettings.from_config(limits)
    assert (http.connect_timeout, http.read_timeout, http.max_retries) == (3.5, 7.5, 1)
    untouched = {f.name for f in fields(HTTPSettings)} - {
        "connect_timeout",
        "read_timeout",
        "max_retries",
    }
    assert all(getattr(http, n) == getattr(HTTPSettings(), n) for n in untouched)


def _limits_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"[limits]\n{text}\n", encoding="utf-8")
    return path


def test_output_caps_are_named_in_bytes_the_unit_they_are_enforced_in(tmp_path: Path) -> None:
    text = "max_tool_output_bytes = 300\nmax_live_output_bytes = 200"
    config = load_config(_limits_file(tmp_path, text), environ={})
    assert ToolLimits.from_config(config.limits).output_max_bytes == 300
    assert config.limits.max_live_output_bytes == 200
    assert config.sources["limits.max_tool_output_bytes"] == str(tmp_path / "config.toml")
    # What the model gets of a long non-ASCII output: at most about that many bytes.
    capped = cap_text("é" * 1000, config.limits.max_tool_output_bytes)
    assert len(capped.encode()) < 300 + 80


def test_the_old_chars_names_still_load_and_are_told_apart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = "max_tool_output_chars = 300\nmax_live_output_chars = 200"
    with caplog.at_level(logging.WARNING):
        config = load_config(_limits_file(tmp_path, text), environ={})
    assert (config.limits.max_tool_output_bytes, config.limits.max_live_output_bytes) == (300, 200)
    assert "max_tool_output_chars is now max_tool_output_bytes" in caplog.text
    both = "max_tool_output_chars = 300\nmax_tool_output_bytes = 400"
    with pytest.raises(ConfigError, match="set only max_tool_output_bytes"):
        load_config(_limits_file(tmp_path, both), environ={})
