"""The line a configuration error is about, found again in the file's text."""

from __future__ import annotations

import pytest

from toolwire.config.lines import key_line, toml_syntax

TEXT = """\
mode = "ask"   # a comment
[limits]
max_tokens = 3

[backends."my.model"]
provider = "anthropic"
tools.web.timeout = 3

[[hooks]]
command = "x"
"""


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("mode",), 1),
        (("limits", "max_tokens"), 3),
        (("limits", "unknown"), 2),  # not there: the table holding it
        (("backends", "my.model", "provider"), 6),
        (("backends", "my.model", "tools", "web", "timeout"), 7),
        (("backends", "my.model"), 5),
        (("nowhere", "at_all"), None),
    ],
)
def test_key_line(path: tuple[str, ...], line: int | None) -> None:
    assert key_line(TEXT, path) == line


def test_toml_syntax_moves_the_line_out_of_the_message() -> None:
    line, message = toml_syntax("Expected '=' after a key (at line 4, column 9)")
    assert line == 4
    assert message == "Expected '=' after a key (column 9)"
