"""A provider's 400 about one image: recognised, its block found again, the image noted.

Each error body has the shape the provider answers with; it goes through the same
readers the HTTP backend uses (message, code, ``param``), then the block is found in the
body a real builder makes from a history where wire and history indices differ (a system
prompt, a tool result's images in a user message of their own, merged user messages).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import path_to
from toolwire.backends import ModelRequest, anthropic, gemini, openai_chat, openai_responses
from toolwire.backends._failures import provider_code, provider_message, provider_param
from toolwire.backends.refusal import BlockRefusal, block_refusal, noted, refused_images
from toolwire.history import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    tool_results,
    user,
)
from toolwire.history.images import has_images

GOOD = ImagePart(
    "image/png",
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==",
)
BAD = ImagePart("image/png", "bm90IGFuIGltYWdl!!")  # not base64, as an older version stored
SHOT = ImagePart("image/jpeg", "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsL")


def _refusal(status: int, body: dict[str, Any] | list[Any]) -> BlockRefusal | None:
    raw = json.dumps(body).encode()
    return block_refusal(status, provider_message(raw), provider_code(raw), provider_param(raw))


def _anthropic(message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_0123",
    }


def _openai(message: str, code: str | None, param: str | None) -> dict[str, Any]:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return {"error": error}


@pytest.mark.parametrize(
    ("message", "reason", "path"),
    [
        (
            "messages.3.content.1.image.source.base64: invalid base64 data",
            "invalid base64 data",
            ("messages", 3, "content", 1),
        ),
        (
            "messages.5.content.0.tool_result.content.1.image.source.base64: invalid base64 data",
            "invalid base64 data",
            ("messages", 5, "content", 0, "tool_result", "content", 1),
        ),
        (
            "messages.5.content.0.content.1.image.source.base64.data: Image does not match "
            "the provided media type image/png",
            "Image does not match the provided media type image/png",
            ("messages", 5, "content", 0, "content", 1),
        ),
        (
            "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: "
            "7340032 bytes > 5242880 bytes",
            "image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes",
            ("messages", 0, "content", 1),
        ),
        (
            "messages.2.content.0.image.source.base64.data: At least one of the image "
            "dimensions exceed max allowed size: 8000 pixels",
            "At least one of the image dimensions exceed max allowed size: 8000 pixels",
            ("messages", 2, "content", 0),
        ),
        (
            "messages.4.content.0.tool_result.content.0.image.source.base64.media_type: "
            "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
            "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
            ("messages", 4, "content", 0, "tool_result", "content", 0),
        ),
        ("Could not process image", "Could not process image", None),
    ],
)
def test_anthropic_names_the_block(
    message: str, reason: str, path: tuple[str | int, ...] | None
) -> None:
    assert _refusal(400, _anthropic(message)) == BlockRefusal(reason, path)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (
            _openai("Invalid image.", "invalid_image", "messages[2].content[1].image_url"),
            ("messages", 2, "content", 1),
        ),
        (_openai("Invalid image.", None, None), None),
        (
            _openai(
                "You uploaded an unsupported image. Please make sure your image is below 20 "
                "MB in size and is of one the following formats: ['png', 'jpeg', 'gif', "
                "'webp'].",
                "invalid_image_format",
                "input[3].content[0].image_url",
            ),
            ("input", 3, "content", 0),
        ),
        (
            _openai(
                "The image data you provided does not represent a valid image.",
                "image_parse_error",
                None,
            ),
            None,
        ),
        (
            _openai(
                "Invalid content type. image_url is only supported by certain models.",
                None,
                "messages.[0].content.[1].type",
            ),
            ("messages", 0, "content", 1),
        ),
    ],
)
def test_openai_code_and_param(body: dict[str, Any], path: tuple[str | int, ...] | None) -> None:
    refusal = _refusal(400, body)
    assert refusal is not None
    assert refusal.path == path
    said = body["error"]["message"].rstrip(".")
    assert refusal.reason == (said if len(said) <= 120 else said[:119] + "…")


def test_gemini_field_violation_and_plain_message() -> None:
    field = "contents[0].parts[2].inline_data.data"
    violation = {
        "code": 400,
        "message": f"Invalid value at '{field}' (TYPE_BYTES), Base64 decoding failed for \"x\"",
        "status": "INVALID_ARGUMENT",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": field, "description": "Base64 decoding failed"}],
            }
        ],
    }
    refusal = _refusal(400, [{"error": violation}])
    assert refusal is not None
    assert refusal.path == ("contents", 0, "parts", 2)
    plain = {"code": 400, "message": "Provided image is not valid.", "status": "INVALID_ARGUMENT"}
    assert _refusal(400, {"error": plain}) == BlockRefusal("Provided image is not valid", None)
    unable = {
        "code": 400,
        "message": "Unable to process input image. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
        "status": "INVALID_ARGUMENT",
    }
    refusal = _refusal(400, {"error": unable})
    assert refusal is not None
    assert refusal.path is None


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (
            413,
            {"type": "error", "error": {"type": "request_too_large", "message": "Request "
             "exceeds the maximum size"}},
            "Request exceeds the maximum size",
        ),
        (
            400,
            {"error": {"code": 400, "message": "Request payload size exceeds the limit: "
             "20971520 bytes.", "status": "INVALID_ARGUMENT"}},
            "Request payload size exceeds the limit: 20971520 bytes",
        ),
    ],
)  # fmt: skip
def test_a_request_too_large_blames_every_image(
    status: int, body: dict[str, Any], reason: str
) -> None:
    """Images pile up in a history that is sent whole every turn: Anthropic's 32 MB and
    Gemini's 20 MB per request refuse every later request of a session once they hold
    enough screenshots. The refusal names no block, so every image is one it may be about
    (and a history without images is refused as it is)."""
    refusal = _refusal(status, body)
    assert refusal == BlockRefusal(reason, None)
    noted_history, count = noted(_history(), None, refusal.reason)
    assert count == 3
    assert not has_images(noted_history)


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, _anthropic("prompt is too long: 250123 tokens > 200000 maximum")),
        (400, _anthropic("messages.1.content.0.text: text content blocks must be non-empty")),
        (429, _anthropic("Could not process image")),  # not a 4xx about the request
        (500, _openai("Invalid image.", "invalid_image", None)),
        (400, _openai("Invalid 'tools[0].function.name'", "invalid_value", "tools[0]")),
    ],
)
def test_other_errors_are_not_block_refusals(status: int, body: dict[str, Any]) -> None:
    assert _refusal(status, body) is None


# -- finding the block in the body sent ---------------------------------------------------


def _history() -> list[Message]:
    """A good image, a Read whose result carries a bad image, then a prompt with a shot."""
    call = ToolCallPart("call_1", "Read", {"file_path": "bad.png"})
    return [
        Message("user", (TextPart("what is this?"), GOOD)),
        Message("assistant", (TextPart("A dot. Reading the other."), call), backend="b"),
        tool_results([ToolResultPart("call_1", "Read", "bad.png", images=(BAD,))]),
        Message("user", (TextPart("and this one?"), SHOT)),
    ]


def _request() -> ModelRequest:
    return ModelRequest(system="You are terse.", messages=tuple(_history()))


def _find(body: dict[str, Any], image: ImagePart) -> tuple[str | int, ...]:
    """The wire path of ``image`` in ``body`` (what the provider would name): the block
    that holds its data."""
    path = path_to(body, image.data)
    assert image.data
    assert path is not None
    return path[:-1]


BODIES = {
    "anthropic": lambda r: anthropic.build_body(r, model="m", backend="b"),
    "openai-chat": lambda r: openai_chat.build_body(r, model="m", backend="b"),
    "openai-responses": lambda r: openai_responses.build_body(r, model="m", backend="b"),
    "gemini": lambda r: gemini.build_body(r, model="m", backend="b"),
}


# Gemini sends a tool result's images as notes: only the prompt's image can be refused.
CASES = [(p, i) for p in sorted(BODIES) for i in ("prompt", "tool-result")]


@pytest.mark.parametrize(
    ("provider", "where"), [c for c in CASES if c != ("gemini", "tool-result")]
)
def test_the_path_leads_to_that_image_only(provider: str, where: str) -> None:
    image = SHOT if where == "prompt" else BAD
    body = BODIES[provider](_request())
    sent = [i for i in (GOOD, BAD, SHOT) if i.data in json.dumps(body)]
    path = _find(body, image)
    refusal = BlockRefusal("invalid base64 data", path)
    sources = refused_images(body, refusal)
    assert sources is not None
    history, count = noted(_history(), sources, refusal.reason)
    assert count == 1
    flat = json.dumps(BODIES[provider](ModelRequest(system="s", messages=tuple(history))))
    assert image.data not in flat, "the refused image is still sent"
    assert "the model refused it (invalid base64 data)" in flat
    others = [i for i in sent if i is not image]
    assert all(i.data in flat for i in others), "an image that was not refused went too"


def test_anthropic_tool_result_path_as_the_api_writes_it() -> None:
    """``messages.N.content.0.tool_result.content.0``: ``tool_result`` is a type, no key."""
    body = anthropic.build_body(_request(), model="m", backend="b")
    where = next(
        i for i, m in enumerate(body["messages"]) if m["content"][0]["type"] == "tool_result"
    )
    message = (
        f"messages.{where}.content.0.tool_result.content.1.image.source.base64: invalid base64 data"
    )
    refusal = block_refusal(400, message)
    assert refusal is not None
    assert refused_images(body, refusal) == frozenset({BAD.data})


def test_without_a_path_every_image_is_noted() -> None:
    body = anthropic.build_body(_request(), model="m", backend="b")
    refusal = block_refusal(400, "Could not process image")
    assert refusal is not None
    assert refused_images(body, refusal) is None
    history, count = noted(_history(), None, refusal.reason)
    assert count == 3
    flat = json.dumps(
        anthropic.build_body(
            ModelRequest(system="s", messages=tuple(history)), model="m", backend="b"
        )
    )
    assert '"image"' not in flat
    assert flat.count("the model refused it (Could not process image)") == 3


def test_a_path_that_leads_to_no_image_is_not_trusted() -> None:
    body = anthropic.build_body(_request(), model="m", backend="b")
    for path in (("messages", 0, "content", 0), ("messages", 40, "content", 1)):
        assert refused_images(body, BlockRefusal("Invalid image", path)) is None


def test_a_url_image_is_found_by_its_url() -> None:
    linked = ImagePart("image/png", url="https://example.com/a.png")
    request = ModelRequest(
        system="", messages=(Message("user", (TextPart("see"), linked)), user("ok"))
    )
    body = openai_chat.build_body(request, model="m", backend="b")
    sources = refused_images(body, BlockRefusal("Invalid image", ("messages", 0, "content", 1)))
    assert sources == frozenset({"https://example.com/a.png"})
    history, count = noted(request.messages, sources, "Invalid image")
    assert count == 1
    assert history[0].parts[1] == TextPart(
        linked.note("not sent: the model refused it (Invalid image)")
    )
