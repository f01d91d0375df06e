"""The schema's one-line errors: every table, every kind of mistake, worded alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.config import load_config
from toolwire.config.choices import ToolFormat
from toolwire.config.schema import BackendConfig, ConfigError
from toolwire.proxy.settings import load_settings


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("limits = 3", r": limits must be a table \(\[limits\]\); fix that section$"),
        ("backends = {x = 3}", r": backends.x must be a table \(\[backends.x\]\)"),
        ("proxy = 3", r": proxy must be a table \(\[proxy\]\)"),
        (
            "mode = 3",
            r"^mode 3 \(from .*\) is not valid; use one of ask, accept-edits, read-only, plan, "
            r"bypass$",
        ),
        ("profile = 'max'", r"^profile 'max' \(from .*\) is not valid; use one of minimal, "),
        ("default_backend = ''", r": default_backend must be a non-empty string$"),
        (
            "[backends.x]\nmodel = 'm'",
            r"\[backends.x\]: provider is missing; set it to one of an",
        ),
        ("[backends.x]\nprovider = 'replay'", r"\[backends.x\]: a replay backend needs cassette ="),
        (
            "[backends.x]\nprovider = 'gemini'\nmodel = 'm'\ntool_format = 'json'",
            r"\[backends.x\]: tool_format = 'json' is not valid; use one of native, xml-tags",
        ),
        (
            "[backends.x]\nprovider = 'gemini'\nmodel = 'm'\nname = 'y'",
            r": unknown key 'name' in \[backends.x\]; known keys: provider, model, base_url",
        ),
        (
            "[limits]\nmax_tokns = 1",
            r"unknown key 'max_tokns' in \[limits\]; did you mean 'max_t",
        ),
        ("[limits]\nmax_tokens = 1.5", r"limits.max_tokens must be a positive integer, got 1.5$"),
        ("[limits]\nmax_tokens = true", r"limits.max_tokens must be a positive integer, got True$"),
        ("[handoff]\nkeep_last = 0", r"handoff.keep_last must be a positive integer, got 0$"),
        # An unknown key is reported before the value it left missing or wrong.
        ("[backends.x]\nmodle = 'm'\n[limits]\nmax_tokens = 0", r"unknown key 'modle'"),
        ("[limits]\nmax_tokens = 0\n[handoff]\nfoo = 1", r"unknown key 'foo' in \[handoff\]"),
    ],
)
def test_file_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("key", "message"), [("api_key_env", "must be the NAME"), ("api_key", "do not put an API key")]
)
def test_a_key_put_in_the_config_file_is_never_echoed(
    tmp_path: Path, key: str, message: str
) -> None:
    secret = "sk-ant-api03-very-secret"
    path = _file(tmp_path, f"[backends.x]\nprovider = 'anthropic'\nmodel = 'm'\n{key} = {secret!r}")
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path, environ={})
    assert secret not in str(info.value)


def test_values_from_the_environment_name_their_variable(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "TOOLWIRE_MODE": "yolo"}
    with pytest.raises(ConfigError, match=r"^mode 'yolo' \(from \$TOOLWIRE_MODE\) is not valid"):
        load_config(environ=env)
    with pytest.raises(ConfigError, match=r"^profile 'max' \(from --profile\) is not valid"):
        load_config(environ={"XDG_CONFIG_HOME": str(tmp_path)}, profile="max")


def test_a_backend_in_code_keeps_the_tables_rules() -> None:
    demo = BackendConfig(name="demo", provider="replay", cassette="x.jsonl")
    assert (demo.model, demo.tool_format, demo.api_key_env) == ("", "native", None)
    with pytest.raises(ValueError, match="model is missing"):
        BackendConfig(name="x", provider="gemini")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("store_ttl = -1", r": proxy.store_ttl must be an integer >= 0, got -1$"),
        ("retries = 'x'", r": proxy.retries must be an integer >= 0, got 'x'$"),
        ("max_body_bytes = 0", r": proxy.max_body_bytes must be a positive integer, got 0$"),
        ("token = 5", r": proxy.token must be a string$"),
        ("tokn = 'a'", r": unknown key 'tokn' in \[proxy\]; did you mean 'token'\?$"),
        ("pass_client_key = 'yes'", r": proxy.pass_client_key must be true or false, got 'yes'$"),
        ("models = 3", r": proxy.models must be a table \(\[proxy.models\]\)"),
        ("[proxy.models]\nx = 3", r": proxy.models must be a table mapping model names to 'bac"),
        ("store_ttl = 60", r": proxy.store_ttl needs a redis:// store$"),
    ],
)
def test_proxy_table_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _file(tmp_path, f"[proxy]\n{text}\n")
    with pytest.raises(ConfigError, match=message) as info:
        load_settings(path)
    assert str(info.value).startswith(str(path))


def test_proxy_table_values(tmp_path: Path) -> None:
    text = "[proxy]\ntoken = 't'\npass_client_key = true\nretries = 2\n[proxy.models]\na = 'demo'"
    settings = load_settings(_file(tmp_path, text))
    assert (settings.token, settings.pass_client_key, settings.retries) == ("t", True, 2)
    assert settings.models == {"a": "demo"}
    assert (settings.store, settings.store_ttl, settings.max_body_bytes) == ("memory", 0, 1 << 25)
    assert settings.default_backend == settings.config.default_backend


@pytest.mark.parametrize(
    ("tool_format", "vision", "native", "images"),
    [
        ("native", True, True, True),
        ("native", False, True, False),
        ("hermes", True, False, False),
        ("xml-tags", False, False, False),
    ],
)
def test_a_backend_says_what_it_takes(
    tool_format: ToolFormat, *, vision: bool, native: bool, images: bool
) -> None:
    chosen = BackendConfig(
        name="x", provider="openai-chat", model="m", tool_format=tool_format, vision=vision
    )
    assert chosen.native_tools is native
    assert chosen.takes_images is images


@pytest.mark.parametrize(
    ("written", "canonical"),
    [("qwen3_coder", "qwen3-coder"), ("xml_tags", "xml-tags"), ("HERMES", "hermes")],
)
def test_tool_format_takes_vllm_spellings(tmp_path: Path, written: str, canonical: str) -> None:
    # vLLM names its parsers with underscores; a config written for it works unchanged.
    path = _file(
        tmp_path, f"[backends.x]\nprovider = 'openai-chat'\nmodel = 'm'\ntool_format = '{written}'"
    )
    assert load_config(path, environ={}).backends["x"].tool_format == canonical


@pytest.mark.parametrize(
    ("table", "mode"),
    [
        ({"provider": "openai-chat", "base_url": "http://localhost:11434/v1"}, "auto"),
        ({"provider": "openai-chat", "base_url": "https://openrouter.ai/api/v1"}, "auto"),
        ({"provider": "openai-chat"}, "off"),
        ({"provider": "openai-chat", "base_url": "https://api.openai.com/v1"}, "off"),
        ({"provider": "anthropic", "base_url": "https://api.anthropic.com"}, "off"),
        (
            {"provider": "openai-chat", "base_url": "http://x:1/v1", "tool_format": "hermes"},
            "off",
        ),
        ({"provider": "openai-chat", "base_url": "http://x:1/v1", "rescue": "off"}, "off"),
        ({"provider": "openai-chat", "rescue": "auto"}, "auto"),
    ],
)
def test_rescue_is_on_for_servers_that_are_not_the_providers_own(
    table: dict[str, str], mode: str
) -> None:
    assert BackendConfig(name="x", model="m", **table).rescue_mode == mode  # type: ignore[arg-type]


def test_rescue_with_a_text_tool_format_is_refused(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "[backends.x]\nprovider = 'openai-chat'\nmodel = 'm'\ntool_format = 'hermes'\n"
        "rescue = 'auto'\n",
    )
    with pytest.raises(ConfigError, match=r'rescue = "auto" applies to native tool calls'):
        load_config(path, environ={})


def test_toolwire_config_shows_each_backends_rescue_and_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolwire.cli import app

    path = _file(
        tmp_path,
        "[backends.local]\nprovider = 'openai-chat'\nmodel = 'm'\n"
        "base_url = 'http://127.0.0.1:11434/v1'\n"
        "[backends.strict]\nprovider = 'openai-chat'\nmodel = 'm'\n"
        "base_url = 'http://127.0.0.1:8000/v1'\nrescue = 'off'\n",
    )
    shown = CliRunner().invoke(app, ["config", "--config", str(path)])
    assert shown.exit_code == 0, shown.output
    lines = [" ".join(ln.split()) for ln in shown.output.splitlines() if ln.startswith("rescue")]
    assert lines[0].startswith("rescue = auto (default: a base_url server")
    assert lines[1] == f"rescue = off ({path})"
