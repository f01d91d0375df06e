"""HTML to Markdown on pages written for these tests: ``pages/NAME.html`` must become
``pages/NAME.md`` exactly (scripts, styles, navigation, forms and the like dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.web.decode import page_text

PAGES = sorted((Path(__file__).parent / "pages").glob("*.html"))


@pytest.mark.parametrize("html", PAGES, ids=[p.stem for p in PAGES])
def test_golden_markdown(html: Path) -> None:
    text, kind = page_text(html.read_bytes(), "text/html")
    assert kind == "text/html"
    assert text == html.with_suffix(".md").read_text(encoding="utf-8")
    for noise in ("analytics", "tracker", "Subscribe", "Enable JavaScript", "never shown"):
        assert noise not in text
