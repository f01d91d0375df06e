"""What PyPI shows and what a user types first, checked without building: the project's
metadata is complete, the README reads right outside the repository and starts with the
install, and ``toolwire --version`` answers."""

from __future__ import annotations

import re
import tomllib

from typer.testing import CliRunner

from tests.helpers import REPO
from toolwire import __version__
from toolwire.cli import app


def test_the_project_metadata_is_complete() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for key in ("description", "readme", "license", "requires-python", "urls", "classifiers"):
        assert project.get(key), key
    assert "version" in project["dynamic"]  # from toolwire.__version__ only
    assert all(url.startswith("https://") for url in project["urls"].values())
    assert project["scripts"] == {"toolwire": "toolwire.cli:main"}


def test_the_readme_starts_with_the_install_and_links_only_absolute_urls() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = readme.split("\n## ", 2)[1]  # the first section
    assert first.startswith("Install")
    for command in ("uv tool install toolwire", "pipx install toolwire", "uvx toolwire acp"):
        assert first.index(command) < first.index("From source"), command
    # A relative link or in-page anchor resolves in a clone only, not on PyPI.
    assert re.findall(r"\]\((?!https?://)[^)]*\)", readme) == []


def test_toolwire_version_prints_the_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"toolwire {__version__}\n"
