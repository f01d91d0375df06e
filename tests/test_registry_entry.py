"""The ACP registry entry (docs/registry.md, docs/registry/toolwire/) as the registry's CI
checks it today: ``agent.json`` to ``agent.schema.json``'s rules, pinned to the version
toolwire is; ``icon.svg`` 16x16 and monochrome in ``currentColor``; and the auth check,
``toolwire acp`` answering ``initialize`` with no key set or stored."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.registry_check import auth_check, entry_errors, icon_errors
from tests.test_docs import ROOT, blocks
from toolwire import __version__

FOLDER = ROOT / "docs" / "registry" / "toolwire"


def _entry() -> dict[str, object]:
    entry: dict[str, object] = json.loads((FOLDER / "agent.json").read_text(encoding="utf-8"))
    return entry


def test_the_entry_has_the_registry_shape_and_this_version() -> None:
    entry = _entry()
    assert entry_errors(entry, FOLDER.name) == []
    assert entry["version"] == __version__
    assert entry["distribution"] == {
        "uvx": {"package": f"toolwire=={__version__}", "args": ["acp"]}
    }
    text = (ROOT / "docs" / "registry.md").read_text(encoding="utf-8")
    [block] = [b for b in blocks(text) if b.lang == "json"]
    assert json.loads(block.text) == entry  # the doc shows the file


def test_the_rules_refuse_what_the_registry_refuses(tmp_path: Path) -> None:
    bad = {**_entry(), "id": "Tool_Wire", "distribution": {"uvx": {"package": "toolwire"}}}
    assert len(entry_errors(bad, "toolwire")) == 2
    icon = tmp_path / "icon.svg"
    icon.write_text('<svg viewBox="0 0 24 24"><path fill="#000" d="M0 0h1"/></svg>')
    assert len(icon_errors(icon)) == 3  # the size, the color, no currentColor


def test_the_icon_is_16x16_and_monochrome() -> None:
    assert icon_errors(FOLDER / "icon.svg") == []


@pytest.mark.e2e
def test_the_auth_check_passes_with_no_key_set_or_stored() -> None:
    # The uvx distribution's command: the package's script with the entry's args.
    uvx = _entry()["distribution"]["uvx"]  # type: ignore[index]
    methods = auth_check([sys.executable, "-m", "toolwire", *uvx["args"]])
    assert ("env", "agent") in [(m["id"], m.get("type", "agent")) for m in methods]


def test_the_zed_snippets_are_custom_agent_servers() -> None:
    """Zed's settings take an agent launched by its own command as ``"type": "custom"``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    editors = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    zed = editors.split("## Zed", 1)[1].split("\n## ", 1)[0]
    servers = [
        server
        for text in (readme, zed)
        for block in blocks(text)
        if block.lang == "json" and "agent_servers" in block.text
        for server in json.loads(block.text)["agent_servers"].values()
    ]
    assert len(servers) == 2
    assert all(s["type"] == "custom" and s["args"][-1] == "acp" for s in servers)
