"""``[tools.web] search``, ``searxng_url`` and ``api_key_env``: checked, one-line errors,
shown by ``toolwire config``, and turned into the search settings the agent uses."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.cli import app
from toolwire.config import ConfigError, load_config
from toolwire.web import SearchSettings


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("search = 'searxng'", r'search = "searxng" needs searxng_url'),
        ("search = 'bing'", r"tools.web.search"),
        ("searxng_url = '127.0.0.1:8888'", r"searxng_url must start with http:// or https://"),
        ("search = 'brave'\napi_key_env = 'BSA-123 456'", r"the NAME of the environment variable"),
    ],
)
def test_mistakes_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, "[tools.web]\n" + text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert "\n" not in str(info.value)


def test_unset_by_default_and_shown_so(tmp_path: Path) -> None:
    path = _file(tmp_path, "")
    web = load_config(path, environ={}).tools.web
    assert (web.search, web.searxng_url, web.api_key_env) == (None, None, None)
    assert SearchSettings.from_config(web) is None
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    (line,) = [ln for ln in shown.output.splitlines() if ln.startswith("search ")]
    assert "(unset)" in line


def test_a_provider_becomes_the_agents_search_settings(tmp_path: Path) -> None:
    text = "[tools.web]\nsearch = 'tavily'\napi_key_env = 'MY_TAVILY'\ntimeout = 7\n"
    web = load_config(_file(tmp_path, text), environ={}).tools.web
    settings = SearchSettings.from_config(web)
    assert settings == SearchSettings("tavily", None, "MY_TAVILY", 7.0)
    assert settings.api_key({"MY_TAVILY": "tvly-abc"}) == "tvly-abc"
    native = load_config(_file(tmp_path, "[tools.web]\nsearch = 'native'\n"), environ={})
    assert SearchSettings.from_config(native.tools.web) is None
