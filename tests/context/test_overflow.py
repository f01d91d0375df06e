"""The providers' context-length errors, as their APIs and the compatible servers word
them (bodies written for these tests after the providers' documented shapes)."""

from __future__ import annotations

import json

import pytest

from toolwire.backends._failures import provider_code, provider_message
from toolwire.context import is_context_overflow
from toolwire.context.overflow import counted_tokens, window_limit

OVERFLOWS = {
    "anthropic": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
        },
        208310,
    ),
    "anthropic-max-tokens": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 23975 + 2048 "
                "> 24000, decrease input length or `max_tokens` and try again",
            },
        },
        23975,
    ),
    "openai-chat": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, "
                "your messages resulted in 130532 tokens. Please reduce the length of the "
                "messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        130532,
    ),
    "openai-responses": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please "
                "adjust your input and try again.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
        None,
    ),
    "gemini": (
        400,
        {
            "error": {
                "code": 400,
                "message": "The input token count (1196265) exceeds the maximum number of "
                "tokens allowed (1048575).",
                "status": "INVALID_ARGUMENT",
            }
        },
        1196265,
    ),
    "llama.cpp": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
            }
        },
        None,
    ),
    "vllm": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 32768 tokens. However, you "
            "requested 40000 tokens (38000 in the messages, 2000 in the completion).",
            "type": "BadRequestError",
            "code": 400,
        },
        40000,
    ),
}


@pytest.mark.parametrize("name", sorted(OVERFLOWS))
def test_each_providers_overflow_is_recognized(name: str) -> None:
    status, body, counted = OVERFLOWS[name]
    raw = json.dumps(body).encode()
    message, code = provider_message(raw), provider_code(raw)
    assert is_context_overflow(status, message, code)
    assert counted_tokens(message) == counted
    assert window_limit(message) == LIMITS.get(name)


LIMITS = {
    "anthropic": 200000,
    "anthropic-max-tokens": 24000,
    "openai-chat": 128000,
    "gemini": 1048575,
    "vllm": 32768,
}


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (429, "prompt is too long: 1 tokens > 0 maximum", None),  # a rate limit is not
        (400, "messages.1.content: tool_use ids must be unique", "invalid_request_error"),
        (401, "invalid x-api-key", "authentication_error"),
        (500, "Internal server error", "api_error"),
    ],
)
def test_other_errors_are_not(status: int, message: str, code: str | None) -> None:
    assert not is_context_overflow(status, message, code)
