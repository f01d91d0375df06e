"""What a call's card shows when it ends, as the tool's result decides it.

A ``Card`` is the end of one tool call for the editor: the text, or content that replaces
it (a diff, links, a terminal, images), the places touched and the ``rawOutput``; or the
error a failed call shows. ``ToolResult.card`` builds it; the agent only applies it to
the call's lifecycle (``end``), so a tool with new content needs no branch in the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.history import ImagePart
from toolwire.imaging import SHOWN_BASE64
from toolwire.updates.lifecycle import ToolCallLifecycle
from toolwire.updates.wire import JsonObject, image_content, text_content


@dataclass(frozen=True, slots=True)
class Card:
    """The end of a call for the editor; ``error`` set: it failed."""

    text: str | None = None
    """The result text (the lifecycle caps it); None with no ``content``: the output the
    call streamed, capped the same way."""
    content: tuple[JsonObject, ...] | None = None
    """What the card shows instead of the text."""
    locations: tuple[JsonObject, ...] = ()
    """What the call touched (the line an edit changed), for the editor to follow."""
    raw_output: Mapping[str, Any] | None = None
    error: str | None = None
    clear: bool = False
    """A failed call drops what the card showed (a previewed diff that was not applied)."""

    def end(self, life: ToolCallLifecycle) -> None:
        """End ``life`` with this card: ``completed``, or ``failed`` with the error."""
        raw = dict(self.raw_output) if self.raw_output is not None else None
        if self.error is not None:
            if self.clear:
                life.set_content(())
            life.fail(self.error, raw_output=raw)
            return
        places = self.locations or None
        life.complete(self.text, raw_output=raw, content=self.content, locations=places)


def shown_image(image: ImagePart) -> JsonObject:
    """An image for the card: itself, or its note when over ``SHOWN_BASE64``."""
    if len(image.data) > SHOWN_BASE64:
        return text_content(image.note("too large to show here"))
    return image_content(image.data, image.media_type)


__all__ = ["Card", "shown_image"]
