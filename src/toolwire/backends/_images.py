"""Images in each provider's wire form, and the history a backend that takes none gets.

Anthropic: ``image`` blocks (``base64`` or ``url`` source), in user messages and inside
``tool_result`` content. OpenAI Chat: ``image_url`` parts (a data URL for bytes) in a
user content array; a ``tool`` message takes text only, so a result's images follow in a
user message. Responses: ``input_image`` items, in user messages and in a
``function_call_output``'s ``output`` list. Gemini: ``inlineData`` (``fileData`` for a
URL) in user turns; a ``functionResponse`` gets a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolwire.backends.textformat import to_text_history
from toolwire.config.choices import ToolFormat, native_tools
from toolwire.history import ImagePart, Message
from toolwire.history.images import has_images, without_images
from toolwire.history.pairing import repair


def wire_history(
    messages: Sequence[Message], tool_format: ToolFormat, *, vision: bool
) -> list[Message]:
    """The history a request builder translates: repaired (or as text markup), and with
    every image as a note unless the backend takes images (native tools and ``vision``)."""
    native = native_tools(tool_format)
    if not (native and vision) and has_images(messages):  # else nothing to rewrite
        messages = without_images(messages)
    return repair(messages) if native else to_text_history(messages, tool_format)


def data_url(image: ImagePart) -> str:
    """``data:image/png;base64,...``, or the image's own URL."""
    return image.url if image.url is not None else f"data:{image.media_type};base64,{image.data}"


def anthropic_image(image: ImagePart) -> dict[str, Any]:
    if image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    source = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


def chat_image(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(image)}}


def responses_image(image: ImagePart) -> dict[str, Any]:
    # ``detail`` is required by the API's published schema; ``auto`` is its default.
    return {"type": "input_image", "image_url": data_url(image), "detail": "auto"}


def gemini_image(image: ImagePart) -> dict[str, Any]:
    if image.url is not None:
        data = {"fileUri": image.url}
        if image.media_type:
            data["mimeType"] = image.media_type
        return {"fileData": data}
    return {"inlineData": {"mimeType": image.media_type, "data": image.data}}


__all__ = [
    "anthropic_image",
    "chat_image",
    "data_url",
    "gemini_image",
    "responses_image",
    "wire_history",
]
