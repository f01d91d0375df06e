"""The ACP registry entry in docs/registry.md: the shape the registry's
``agent.schema.json`` requires, and the version toolwire is."""

from __future__ import annotations

import json
import re

from tests.test_docs import ROOT, blocks
from toolwire import __version__

REQUIRED = ("id", "name", "version", "description", "distribution")
ALLOWED = {
    *REQUIRED,
    "repository",
    "website",
    "authors",
    "license",
    "license_url",
    "icon",
}


def _entry() -> dict[str, object]:
    text = (ROOT / "docs" / "registry.md").read_text(encoding="utf-8")
    [block] = [b for b in blocks(text) if b.lang == "json"]
    entry: dict[str, object] = json.loads(block.text)
    return entry


def test_the_entry_has_the_registry_shape_and_this_version() -> None:
    entry = _entry()
    assert all(entry.get(key) for key in REQUIRED)
    assert set(entry) <= ALLOWED
    assert re.fullmatch(r"[a-z][a-z0-9-]*", str(entry["id"]))
    assert entry["version"] == __version__
    assert entry["distribution"] == {
        "uvx": {"package": f"toolwire=={__version__}", "args": ["acp"]}
    }
