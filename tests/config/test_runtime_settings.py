"""The ``[limits]`` table reaches the runtime types through one ``from_config`` each, and
their defaults are the table's (one place to change a default)."""

from __future__ import annotations

from dataclasses import fields

from toolwire.backends.base import HTTPSettings
from toolwire.config.schema import LimitsConfig
from toolwire.tools.context import ToolLimits


def test_the_runtime_defaults_are_the_configs_defaults() -> None:
    assert ToolLimits.from_config(LimitsConfig()) == ToolLimits()
    assert HTTPSettings.from_config(LimitsConfig()) == HTTPSettings()


def test_configured_limits_reach_the_tools_and_the_http_client() -> None:
    limits = LimitsConfig(
        connect_timeout=3.5,
        read_timeout=7.5,
        max_retries=1,
        command_timeout=9.0,
        max_tool_output_chars=1234,
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
