"""Configuration: file, environment and command line, with sources; `toolwire config`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolwire.backends import create_backend
from toolwire.backends.anthropic import AnthropicBackend
from toolwire.backends.replay import ReplayBackend
from toolwire.cli import app
from toolwire.config import config_path, load_config
from toolwire.config.schema import ConfigError
from toolwire.secrets import mask

KEY = "sk-ant-api03-abcdefghijklmnopqrstuf3"

CONFIG = """
default_backend = "glm"
mode = "accept-edits"

[backends.glm]
provider = "anthropic"
base_url = "https://open.example.com/api/anthropic"
api_key_env = "GLM_KEY"
model = "glm-9"

[backends.local]
provider = "openai-chat"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen3-coder"
tool_format = "qwen3-coder"

[backends.claude]
provider = "anthropic"
model = "claude-x"

[backends.tape]
provider = "replay"
cassette = "tapes/one.jsonl"

[limits]
max_turn_requests = 7
read_timeout = 30

[handoff]
max_tool_result_chars = 500
"""


def _file(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_no_config_and_no_key_says_what_is_missing(tmp_path: Path) -> None:
    cfg = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)})
    assert cfg.default_backend == "demo"
    assert cfg.backend().provider == "replay"
    assert str(cfg.backend().cassette).endswith("demo_session.jsonl")
    assert cfg.no_backend is not None  # the agent says it and runs nothing
    assert "$ANTHROPIC_API_KEY" in cfg.no_backend
    assert "toolwire login" in cfg.no_backend
    assert cfg.mode == "ask"
    assert cfg.profile is None
    assert cfg.file == tmp_path / "toolwire" / "config.toml"
    assert not cfg.file_found


def test_keys_in_the_environment_make_backends(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "GOOGLE_API_KEY": "AIzaXXXX", "ANTHROPIC_API_KEY": KEY}
    cfg = load_config(environ=env)
    assert list(cfg.backends) == ["anthropic", "gemini", "demo"]
    assert cfg.default_backend == "anthropic"
    assert cfg.backends["gemini"].api_key_env == "GOOGLE_API_KEY"
    assert cfg.source("backends.anthropic") == "detected: $ANTHROPIC_API_KEY is set"
    assert cfg.no_backend is None


def test_file_then_environment_then_command_line(tmp_path: Path) -> None:
    path = _file(tmp_path)
    cfg = load_config(path, environ={})
    assert (cfg.default_backend, cfg.mode) == ("glm", "accept-edits")
    assert cfg.source("mode") == str(path)
    assert cfg.source("config") == "--config"
    assert cfg.limits.max_turn_requests == 7
    assert cfg.limits.read_timeout == 30.0
    assert cfg.source("limits.read_timeout") == str(path)
    assert cfg.source("limits.max_tokens") == "default"
    assert cfg.handoff.max_tool_result_chars == 500
    assert cfg.backends["tape"].cassette == str(tmp_path / "tapes" / "one.jsonl")

    env = {"TOOLWIRE_CONFIG": str(path), "TOOLWIRE_MODE": "read-only", "TOOLWIRE_BACKEND": "local"}
    env |= {"TOOLWIRE_MODEL": "qwen-big", "TOOLWIRE_PROFILE": "full"}
    cfg = load_config(environ=env)
    assert (cfg.default_backend, cfg.mode, cfg.profile) == ("local", "read-only", "full")
    assert cfg.backend().model == "qwen-big"
    assert cfg.source("backends.local.model") == "$TOOLWIRE_MODEL"
    assert cfg.source("config") == "$TOOLWIRE_CONFIG"

    cfg = load_config(environ=env, backend="claude", mode="ask")
    assert (cfg.default_backend, cfg.mode) == ("claude", "ask")
    assert (cfg.source("default_backend"), cfg.source("mode")) == ("--backend", "--mode")


def test_keys_go_only_where_they_belong(tmp_path: Path) -> None:
    cfg = load_config(_file(tmp_path), environ={})
    assert cfg.backends["claude"].api_key_env == "ANTHROPIC_API_KEY"  # its own service
    assert cfg.backends["local"].api_key_env is None  # a custom base_url never gets a default key
    assert cfg.backends["glm"].api_key_env == "GLM_KEY"


def test_backend_replay_argument(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_text("")
    cfg = load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)}, backend=f"replay:{tape}")
    assert cfg.default_backend == "replay"
    assert cfg.backend().cassette == str(tape)
    assert cfg.no_backend is None
    with pytest.raises(
        ConfigError, match=r"cassette .*nope.jsonl \(from --backend\) does not exist"
    ):
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)}, backend="replay:nope.jsonl")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mdoe = 'ask'", r"unknown key 'mdoe' in the top level; did you mean 'mode'\?"),
        (
            "mode = 'yolo'",
            r"mode 'yolo' \(from .*config.toml, line 1\) is not valid; "
            "use one of ask, accept-edits",
        ),
        (
            "[backends.x]\nprovider = 'cohere'\nmodel = 'm'",
            r"\[backends.x\]: provider = 'cohere' is not valid",
        ),
        ("[backends.x]\nprovider = 'gemini'", r"\[backends.x\]: model is missing"),
        ("[backends.x]\nprovider = 'gemini'\nmodel = 'm'\napi_key = 'k'", "do not put an API key"),
        (
            "[backends.x]\nprovider = 'gemini'\nmodel = 'm'\napi_key_env = 'AIzaSy-123'",
            "must be the NAME of the environment variable",
        ),
        (
            "[backends.x]\nprovider = 'gemini'\nmodle = 'm'",
            r"unknown key 'modle' in \[backends.x\]; did you mean 'model'",
        ),
        (
            "[limits]\nmax_tokens = 'lots'",
            r"limits.max_tokens must be a positive integer, got 'lots'",
        ),
        ("[limits]\nread_timeout = -1", r"limits.read_timeout must be a positive number"),
        (
            "[backends.x]\nprovider = 'anthropic'\nmodel = 'm'\npassthrough = 'all'",
            r"passthrough = 'all' is not valid",
        ),
        (
            "[backends.x]\nprovider = 'openai-chat'\nmodel = 'm'\npassthrough = 'full'",
            r"passthrough applies to anthropic backends only",
        ),
        ("default_backend = 'nope'", r"unknown backend 'nope' \(from .*\); defined: demo"),
        ("mode = ", "invalid TOML"),
    ],
)
def test_invalid_config_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


def test_a_named_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(from \$TOOLWIRE_CONFIG\) does not exist"):
        load_config(environ={"TOOLWIRE_CONFIG": str(tmp_path / "none.toml")})


def test_config_path_follows_xdg(tmp_path: Path) -> None:
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "toolwire" / "config.toml"
    assert (
        config_path({"XDG_CONFIG_HOME": "relative"}) == Path.home() / ".config/toolwire/config.toml"
    )


def test_mask_shows_only_the_ends() -> None:
    assert mask(KEY) == "sk-a…f3"
    assert mask("short") == "…"


def test_create_backend_from_config(tmp_path: Path) -> None:
    cfg = load_config(_file(tmp_path), environ={})
    with pytest.raises(ConfigError, match=r"needs an API key: \$GLM_KEY is not set"):
        create_backend(cfg.backends["glm"], cfg.limits, environ={})
    glm = create_backend(cfg.backends["glm"], cfg.limits, environ={"GLM_KEY": KEY})
    assert isinstance(glm, AnthropicBackend)
    assert glm.url() == "https://open.example.com/api/anthropic/v1/messages"
    assert glm.headers()["x-api-key"] == KEY
    assert glm.settings.read_timeout == 30.0
    assert isinstance(create_backend(cfg.backends["tape"]), ReplayBackend)


def test_toolwire_config_prints_values_sources_and_masked_keys(tmp_path: Path) -> None:
    path = _file(tmp_path)
    env = {"GLM_KEY": KEY, "ANTHROPIC_API_KEY": "", "TOOLWIRE_MODE": "read-only"}
    result = CliRunner().invoke(app, ["config", "--config", str(path)], env=env)
    assert result.exit_code == 0, result.output
    out = result.output
    assert KEY not in out
    lines: dict[str, str] = {}
    for line in out.splitlines():  # the first of a name: [tools.sandbox] has a mode too
        if "=" in line:
            lines.setdefault(line.split("=")[0].strip(), line)
    assert "glm" in lines["default_backend"]
    assert f"({path})" in lines["default_backend"]
    assert "read-only" in lines["mode"]
    assert "($TOOLWIRE_MODE)" in lines["mode"]
    assert "sk-a…f3" in out
    assert "(from $GLM_KEY)" in out
    assert "(not set)" in out  # claude's key: $ANTHROPIC_API_KEY is empty
    assert "(none: no key is sent)" in out  # the local server
    assert "[backends.demo]" in out
    assert "max_turn_requests" in out


def test_toolwire_config_reports_an_invalid_file_in_one_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "mode = 'yolo'")
    result = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output.strip().startswith("toolwire: mode 'yolo'")
    assert len(result.output.strip().splitlines()) == 1


def test_passthrough_level_is_read_and_shown(tmp_path: Path) -> None:
    text = "[backends.glm]\nprovider = 'anthropic'\nmodel = 'glm-9'\npassthrough = 'core'"
    path = _file(tmp_path, text)
    cfg = load_config(path, environ={})
    assert cfg.backend("glm").passthrough == "core"
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0
    assert any(
        line.split()[:3] == ["passthrough", "=", "core"] for line in shown.output.splitlines()
    ), shown.output
