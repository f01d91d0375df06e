"""``[acp] v2`` read straight from the file, before the configuration has loaded.

``toolwire acp`` answers ``initialize`` before the SDK and the schema (pydantic) have
loaded (``toolwire.agent.launch``). Whether a client asking for protocol version 2 gets
it depends on ``[acp] v2``, so this reads that one key with ``tomllib`` alone (a few
milliseconds), choosing the file as ``load_config`` does. v2 is on by default (no file,
no ``[acp]`` table); a file it cannot read or parse counts as v2 off: the full load
reports what is wrong with it, and the agent that says so speaks v1.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from toolwire.config.keys import config_dir


def acp_v2(path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``[acp] v2`` is on in the file ``load_config(path)`` reads."""
    env = os.environ if environ is None else environ
    if path is not None:
        file = Path(path).expanduser()
    elif env.get("TOOLWIRE_CONFIG"):
        file = Path(env["TOOLWIRE_CONFIG"]).expanduser()
    else:
        file = config_dir(env) / "config.toml"
    if not file.exists():
        return True
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    acp = data.get("acp", {})
    return isinstance(acp, dict) and acp.get("v2", True) is True


__all__ = ["acp_v2"]
