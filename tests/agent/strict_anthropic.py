"""A model that checks images as Anthropic's API does before it answers.

Each image block (in a user message or a ``tool_result``) of the body the agent sent must
be valid base64 of at most 5 MB (base64 characters), decode as an image, and have no side
over 8000 px; else the request gets the API's 400 with its error body (an
``ErrorResponse``), and nothing is streamed. A valid request takes the next answer.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterator, Sequence
from typing import Any

from PIL import Image

from toolwire.backends.base import ModelRequest
from toolwire.testing import FunctionBackend
from toolwire.testing.function import Answer, ErrorResponse

MAX_BASE64 = 5 * 1024 * 1024


def _images(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, message in enumerate(body.get("messages", ())):
        content = message.get("content")
        for j, block in enumerate(content if isinstance(content, list) else ()):
            where = f"messages.{i}.content.{j}"
            if block.get("type") == "image":
                yield f"{where}.image.source.base64", block["source"]
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                for k, inner in enumerate(block["content"]):
                    if inner.get("type") == "image":
                        yield f"{where}.content.{k}.image.source.base64", inner["source"]


def problem(source: dict[str, Any]) -> str | None:
    """What the API says of one image source (None: it takes it)."""
    if source.get("type") != "base64":
        return None
    data = str(source.get("data", ""))
    if len(data) > MAX_BASE64:
        return f"image exceeds 5 MB maximum: {len(data)} bytes > {MAX_BASE64} bytes"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "invalid base64 data"
    try:
        with Image.open(io.BytesIO(raw)) as image:
            image.load()
            size, kind = image.size, Image.MIME.get(image.format or "")
    except Exception:
        return "Could not process image"
    if kind != source.get("media_type"):
        return f"Image does not match the provided media type {source.get('media_type')}"
    if max(size) > 8000:
        return "At least one of the image dimensions exceed max allowed size: 8000 pixels"
    return None


class StrictAnthropic:
    """A ``FunctionBackend``'s function (``backend.function = StrictAnthropic(backend,
    answers)``) that refuses a request with an image the API would refuse; ``refused``
    holds the error messages it answered."""

    def __init__(self, backend: FunctionBackend, answers: Sequence[Answer]) -> None:
        self.backend = backend
        self.answers = list(answers)
        self.refused: list[str] = []

    def __call__(self, request: ModelRequest) -> Answer:
        for where, source in _images(self.backend.bodies[-1]):
            found = problem(source)
            if found is not None:
                self.refused.append(f"{where}: {found}")
                error = {"type": "invalid_request_error", "message": f"{where}: {found}"}
                return ErrorResponse(400, {"type": "error", "error": error})
        if not self.answers:
            raise AssertionError(f"no answer left for request {len(self.backend.bodies)}")
        return self.answers.pop(0)


def images_sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every image source of a request body, in order."""
    return [source for _, source in _images(body)]


__all__ = ["StrictAnthropic", "images_sent", "problem"]
