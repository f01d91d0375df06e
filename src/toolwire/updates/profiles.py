"""Client profiles: how much of a tool call each ``tool_call_update`` repeats.

ACP v1 says "Only the fields being changed need to be included" (``ToolCallUpdate``), and
Zed merges updates into the call it holds (zed-industries/zed, ``acp_thread``). Not every
client
does: some need ``title``/``kind`` on every update to identify the call
(anomalyco/opencode#7368), some were reported to let an omitted field overwrite the
title or status they held (iOfficeAI/AionUi#2669, mrmans0n/alas#15,
frontman-ai/frontman#528). So:

``minimal``  only the changed fields (the default, and what the spec asks for);
``verbose``  the changed fields plus ``title`` and ``kind`` on every update;
``full``     every field on every update: complete objects.

The profile comes from configuration; without one, from the client's name in
``initialize``'s ``clientInfo`` (``CLIENT_PROFILES``), else ``minimal``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from toolwire.config.choices import DEFAULT_PROFILE, PROFILES, Profile

#: Known clients (a word of ``clientInfo.name``, lowercased) -> profile, with the reason.
CLIENT_PROFILES: Final[dict[str, tuple[Profile, str]]] = {
    "zed": ("minimal", "merges updates into the call it holds (acp_thread.rs upsert)"),
    "aionui": ("full", "omitted fields overwrote title/status (iOfficeAI/AionUi#2669)"),
    "alas": ("full", "omitted fields overwrote title/status (mrmans0n/alas#15)"),
    "frontman": ("full", "expected title/kind/locations/raw fields (frontman-ai/frontman#528)"),
}

_WORD = re.compile(r"[a-z0-9]+")


def check_profile(name: str) -> Profile:
    """``name`` as a ``Profile``, or ``ValueError`` naming the valid ones."""
    for profile in PROFILES:
        if name == profile:
            return profile
    raise ValueError(f"unknown profile {name!r}; use one of {', '.join(PROFILES)}")


def profile_for_client(
    client_info: Mapping[str, Any] | str | None,
    configured: str | None = None,
) -> Profile:
    """The profile for a client: ``configured`` if given, else by ``clientInfo.name``.

    ``client_info`` is the ``clientInfo`` object of ``initialize`` (or just its name).
    Matching is by whole words of the lowercased name, so "Zed Preview" is Zed.
    """
    if configured is not None:
        return check_profile(configured)
    name = client_info if isinstance(client_info, str) else None
    if isinstance(client_info, Mapping):
        raw = client_info.get("name")
        name = raw if isinstance(raw, str) else None
    if not name:
        return DEFAULT_PROFILE
    for word in _WORD.findall(name.lower()):
        known = CLIENT_PROFILES.get(word)
        if known is not None:
            return known[0]
    return DEFAULT_PROFILE


__all__ = [
    "CLIENT_PROFILES",
    "DEFAULT_PROFILE",
    "PROFILES",
    "Profile",
    "check_profile",
    "profile_for_client",
]
