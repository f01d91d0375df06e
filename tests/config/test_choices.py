"""The fixed sets have one owner, ``toolwire.config.choices``, and it stays light."""

from __future__ import annotations

import inspect
import subprocess
import sys
from types import NoneType
from typing import get_args

import pytest

import toolwire.backends
import toolwire.config
import toolwire.updates
from toolwire.agent.session.permissions import MODES as MODE_LABELS
from toolwire.config import choices
from toolwire.config.schema import BackendTable, ConfigFile, HandoffConfig
from toolwire.handoff import build_handoff, plan_handoff, prepare_handoff
from toolwire.proxy.passthrough import default_level


def test_every_module_uses_the_one_set() -> None:
    assert toolwire.updates.PROFILES is choices.PROFILES
    assert toolwire.backends.PROVIDERS is choices.PROVIDERS
    assert toolwire.backends.TOOL_FORMATS is choices.TOOL_FORMATS
    assert toolwire.backends.WIRE_FORMATS is choices.WIRE_FORMATS
    assert tuple(MODE_LABELS) == choices.MODES  # labelled, in the same order
    assert default_level(None) in choices.PASSTHROUGH_LEVELS


def test_the_schema_takes_its_choices_from_the_sets() -> None:
    assert get_args(BackendTable.model_fields["provider"].annotation) == choices.PROVIDERS
    for fmt in choices.TOOL_FORMATS:  # the text formats' registry, and native
        table = BackendTable(provider="openai-chat", model="m", tool_format=fmt)
        assert table.tool_format == fmt
    assert get_args(ConfigFile.model_fields["mode"].annotation) == (choices.Mode, NoneType)
    assert get_args(ConfigFile.model_fields["profile"].annotation) == (choices.Profile, NoneType)
    assert (*choices.WIRE_FORMATS, "replay") == choices.PROVIDERS


@pytest.mark.parametrize("entry", [plan_handoff, build_handoff, prepare_handoff])
def test_handoff_config_is_the_handoff_keywords(entry: object) -> None:
    """``[handoff]`` is passed whole (``**model_dump()``): each key is a keyword of the
    handoff entry points, with the same default."""
    assert callable(entry)
    parameters = inspect.signature(entry).parameters
    for name, field in HandoffConfig.model_fields.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == field.default


@pytest.mark.parametrize("module", ["toolwire.updates", "toolwire.config"])
def test_importing_does_not_load_pydantic(module: str) -> None:
    """The pure engine (and the config package it takes its sets from) stays light: the
    config schema, which needs pydantic, loads on first use."""
    code = f"import sys, {module}; print([m for m in sys.modules if m.startswith('pydantic')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_loader_loads_on_first_use() -> None:
    code = "import sys, toolwire.config as c; c.load_config; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = toolwire.config.nope


def test_text_becomes_a_typed_choice_or_none() -> None:
    assert choices.one_of(choices.MODES, "plan") == "plan"
    assert choices.one_of(choices.THOUGHT_LEVELS, "High") is None  # exact, no guessing
    assert choices.one_of(choices.PROFILES, None) is None
