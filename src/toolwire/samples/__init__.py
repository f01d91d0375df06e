"""Bundled samples: a provider stream for ``toolwire decode`` and the ``toolwire demo`` data.

See ``SOURCES.md`` for what each file is and who wrote it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SAMPLES_DIR = Path(__file__).resolve().parent
DEMO_CASSETTE = SAMPLES_DIR / "demo_session.jsonl"
"""The replay cassette of the demo session (one Anthropic streaming body per line)."""
DEMO_PROJECT = SAMPLES_DIR / "demo_project"
"""The small project the demo session works on (a ``slugify`` bug, two failing tests)."""
DEMO_PROMPT = "The slugify tests are failing. Can you find the bug and fix it?"
"""The user prompt the demo cassette answers."""


def copy_demo_project(destination: str | Path) -> Path:
    """A fresh copy of the demo project at ``destination`` (which must not exist yet)."""
    target = Path(destination)
    shutil.copytree(DEMO_PROJECT, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


__all__ = ["DEMO_CASSETTE", "DEMO_PROJECT", "DEMO_PROMPT", "SAMPLES_DIR", "copy_demo_project"]
