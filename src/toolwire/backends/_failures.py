"""Reading a failed answer: the provider's error message, and how long it asks us to wait."""

from __future__ import annotations

import email.utils
import json
import time
from http import HTTPStatus
from typing import Any

import httpx2

_MAX_MESSAGE = 400


def provider_message(raw: bytes) -> str:
    """The provider's error message from an error body, on one line ("" if none).

    Shapes: Anthropic ``{"type":"error","error":{"type","message"}}``, OpenAI
    ``{"error":{"message","type","code"}}``, Gemini ``{"error":{"code","message","status"}}``
    (sometimes inside a list), Ollama ``{"error":"..."}``; else the body's text.
    """
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        data = data[0]
    message = ""
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = str(error.get("message") or error.get("detail") or "")
        elif isinstance(error, str):
            message = error
        message = message or str(data.get("message") or data.get("detail") or "")
    elif not text.lstrip().startswith("<"):  # an HTML error page says nothing useful
        message = text
    return one_line(message)


def provider_code(raw: bytes) -> str | None:
    """The error's ``code`` (OpenAI, Gemini's ``status``) or ``type`` (Anthropic), if any."""
    error = _error_object(raw)
    if error is None:
        return None
    for key in ("code", "status", "type"):
        value = error.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def provider_param(raw: bytes) -> str | None:
    """Where in the request the error is: OpenAI's ``param``, Gemini's first field
    violation (``contents[0].parts[2].inline_data.data``); None when the body does not say."""
    error = _error_object(raw)
    if error is None:
        return None
    param = error.get("param")
    if isinstance(param, str) and param:
        return one_line(param)
    for detail in error.get("details") or ():
        for violation in (detail.get("fieldViolations") or ()) if isinstance(detail, dict) else ():
            field = violation.get("field") if isinstance(violation, dict) else None
            if isinstance(field, str) and field:
                return one_line(field)
    return None


def _error_object(raw: bytes) -> dict[str, Any] | None:
    try:
        data: Any = json.loads(raw)
    except ValueError:
        return None
    if isinstance(data, list) and data:
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else None


def one_line(text: str) -> str:
    """``text`` on one line, whitespace collapsed, at most a few hundred characters."""
    line = " ".join(text.split())
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"


def reason(status: int) -> str:
    """What to say for an error status whose body says nothing."""
    try:
        return f"{HTTPStatus(status).phrase} (no error message in the response)"
    except ValueError:
        return "no error message in the response"


def retry_after(headers: httpx2.Headers) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, ``retry-after`` seconds or date."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


__all__ = [
    "one_line",
    "provider_code",
    "provider_message",
    "provider_param",
    "reason",
    "retry_after",
]
