"""``[tools.web]``: checked like every other key, shown by ``toolwire config``."""

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


def test_defaults_are_thirty_seconds_and_five_megabytes(tmp_path: Path) -> None:
    web = load_config(_file(tmp_path, ""), environ={}).tools.web
    assert (web.timeout, web.max_bytes, web.allow_hosts, web.resolve) == (30.0, 5_000_000, [], {})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools.web]\ntimeot = 3", r"unknown key 'timeot' in \[tools.web\]; did you mean"),
        ("[tools.web]\nallow_hosts = ['https://docs.corp/']", r"is not a host pattern"),
        ("[tools.web]\nresolve = {'docs.corp' = 'somewhere'}", r"is not an IP address"),
        ("[tools.web]\nmax_bytes = 0", r"tools.web.max_bytes"),
    ],
)
def test_mistakes_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert "\n" not in str(info.value)


def test_web_table_is_read_and_shown_with_its_source(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "[tools.web]\nallow_hosts = ['Docs.Corp', '*.intra:8080']\n"
        "resolve = {'docs.corp' = '10.0.0.7'}\ntimeout = 5\n",
    )
    cfg = load_config(path, environ={})
    assert cfg.tools.web.allow_hosts == ["docs.corp", "*.intra:8080"]
    assert cfg.tools.web.resolve == {"docs.corp": "10.0.0.7"}
    assert cfg.source("tools.web.timeout") == str(path)
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "[tools.web]" in shown.output
    (line,) = [ln for ln in shown.output.splitlines() if ln.startswith("resolve")]
    assert '"docs.corp" = "10.0.0.7"' in line
    assert f"({path})" in line
    (line,) = [ln for ln in shown.output.splitlines() if ln.startswith("max_bytes")]
    assert "5000000" in line
    assert "(default)" in line
