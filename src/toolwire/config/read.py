"""The config file read and checked against the schema, an error naming its line.

``tomllib`` keeps no positions and the schema (``validate``) sees only the parsed
tables, so an error's line is found again in the text (``lines``): a syntax error's from
``tomllib``'s message, a key's by a scan for it. The line is what a user looking at an
editor's error needs to find the mistake.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from toolwire.config.errors import ConfigError
from toolwire.config.lines import key_line, toml_syntax
from toolwire.config.schema import ConfigFile, validate
from toolwire.safe_read import MAX_STATE_BYTES, read_file


def validated(file: Path, origin: str) -> ConfigFile:
    """The file checked against the schema; an error names the line of the key at fault."""
    if not file.exists():
        return validate(ConfigFile, {}, str(file))
    text = _text(file, origin)
    try:
        return validate(ConfigFile, tomllib.loads(text), str(file))
    except tomllib.TOMLDecodeError as e:
        number, what = toml_syntax(str(e))
        at = f"{file}, line {number}" if number is not None else str(file)
        raise ConfigError(f"{at}: invalid TOML: {what}; fix the syntax") from None
    except ConfigError as e:
        number = key_line(text, e.key) if e.key else None
        raise ConfigError(_at_line(str(e), str(file), number), e.key) from None


def _at_line(message: str, where: str, number: int | None) -> str:
    """``message`` (about the file ``where``) with the line it is about."""
    if number is None:
        return message
    if message.startswith(where):
        return f"{where}, line {number}{message[len(where) :]}"
    source = f"(from {where})"
    if source in message:
        return message.replace(source, f"(from {where}, line {number})", 1)
    return f"{message} ({where}, line {number})"


def _text(file: Path, origin: str) -> str:
    try:
        # a pipe or a device there is refused (NotReadError, an OSError), never waited on
        return read_file(file, MAX_STATE_BYTES).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{file}: not UTF-8 text ({e.reason}); save it as UTF-8") from e
    except OSError as e:
        raise ConfigError(f"cannot read {file} (from {origin}): {e.strerror or e}") from e


__all__ = ["validated"]
