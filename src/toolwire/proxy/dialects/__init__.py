"""The client dialects the proxy takes besides Anthropic's Messages (docs/proxy.md,
"Adding a dialect"): each an importer into the planner's form and an encoder of the
normalized events, served through the one plan/relay path (``app.py``)."""

from __future__ import annotations

from toolwire.proxy.dialects.base import Dialect, Keeper
from toolwire.proxy.dialects.openai_chat import OpenAIChat
from toolwire.proxy.dialects.openai_responses import OpenAIResponses

# One line per dialect; app.py serves each at its ``path``.
DIALECTS: tuple[Dialect, ...] = (
    OpenAIChat(),
    OpenAIResponses(),
)

__all__ = ["DIALECTS", "Dialect", "Keeper"]
