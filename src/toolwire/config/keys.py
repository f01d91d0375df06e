"""API keys ``toolwire login`` stored: read by a backend whose key variable is unset.

A key is stored under the name of the variable it stands in for (``ANTHROPIC_API_KEY``),
so a backend finds it exactly where it would look in the environment, and a variable
that is set always wins. Where it lives:

* the system keyring (service ``toolwire``), when the optional ``keyring`` package is
  installed and has a working backend (a desktop's Secret Service, macOS Keychain);
* else ``keys.json`` beside the config file, created with mode 0600 (only the user can
  read it) and rewritten through a 0600 temporary file, never widened.

``keys.json`` also records which names live in the keyring (never their values), so
reading a key touches the keyring only for a name ``login`` put there: an agent whose
keys come from the environment never waits on a locked keyring.

``hold_key`` keeps a key in this process's memory only: the one an editor sets with
``providers/set``, which must never reach a file.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from toolwire.safe_read import MAX_STATE_BYTES, read_file

#: The keyring service name keys are stored under.
SERVICE: Final = "toolwire"
#: The file beside ``config.toml`` (mode 0600).
FILE_NAME: Final = "keys.json"
Where = Literal["keyring", "file"]


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """toolwire's config directory: ``$XDG_CONFIG_HOME/toolwire`` or ``~/.config/toolwire``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "toolwire"


def keys_path(environ: Mapping[str, str] | None = None) -> Path:
    """``keys.json`` in ``config_dir``."""
    return config_dir(environ) / FILE_NAME


#: Keys held in this process only (an editor's ``providers/set``): never written anywhere.
_HELD: dict[str, str] = {}


def hold_key(name: str, key: str | None) -> None:
    """Keep ``key`` for variable ``name`` in memory, for this process only (None: forget)."""
    if key is None:
        _HELD.pop(name, None)
    else:
        _HELD[name] = key


def stored_key(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key held in memory or stored for variable ``name``, or None."""
    if name in _HELD:
        return _HELD[name]
    entry = _read(keys_path(environ)).get(name)
    if not isinstance(entry, dict):
        return None
    if entry.get("keyring") is True:
        ring = _keyring()
        try:
            value = ring.get_password(SERVICE, name) if ring is not None else None
        except Exception:  # a locked or broken keyring: as if nothing were stored
            return None
        return value or None
    value = entry.get("value")
    return value if isinstance(value, str) and value else None


def store_key(name: str, key: str, environ: Mapping[str, str] | None = None) -> Where:
    """Store ``key`` for variable ``name``; where it went."""
    path = keys_path(environ)
    data = _read(path)
    ring = _keyring()
    where: Where = "file"
    if ring is not None:
        try:
            ring.set_password(SERVICE, name, key)
            where = "keyring"
        except Exception:  # no usable keyring after all: the 0600 file
            where = "file"
    data[name] = {"keyring": True} if where == "keyring" else {"value": key}
    _write(path, data)
    return where


def forget_key(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Remove the key stored for ``name`` (file and keyring); whether there was one."""
    path = keys_path(environ)
    data = _read(path)
    entry = data.pop(name, None)
    if entry is None:
        return False
    if isinstance(entry, dict) and entry.get("keyring") is True:
        ring = _keyring()
        with contextlib.suppress(Exception):
            if ring is not None:
                ring.delete_password(SERVICE, name)
    _write(path, data)
    return True


def stored_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The variables a key is stored for."""
    return sorted(_read(keys_path(environ)))


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_file(path, MAX_STATE_BYTES))
    except (OSError, ValueError):  # a pipe or a device there is skipped, never waited on
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write through a 0600 temporary file renamed over ``path``: the key is never in a
    file anyone else can read, not even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, json.dumps(data, indent=2, sort_keys=True).encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(temp, path)


def _keyring() -> Any:
    """The system keyring, if the ``keyring`` package is installed and has a real
    backend (its fail and null backends mean none); else None."""
    if os.environ.get("TOOLWIRE_KEYRING", "").lower() in ("off", "0", "no"):
        return None
    try:  # optional (``pip install toolwire[keyring]``), so imported by name
        keyring = importlib.import_module("keyring")
    except ImportError:
        return None
    try:
        ring = keyring.get_keyring()
    except Exception:
        return None
    module = type(ring).__module__
    if module.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return None
    return ring


__all__ = [
    "FILE_NAME",
    "SERVICE",
    "config_dir",
    "forget_key",
    "hold_key",
    "keys_path",
    "store_key",
    "stored_key",
    "stored_names",
]
