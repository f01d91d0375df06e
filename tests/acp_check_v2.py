"""Checks ACP v2 wire messages against the v2 draft schema in ``@agentclientprotocol/sdk``.

The schema's unions accept unknown variants (a tag the reader does not know); a v1 kind
such as ``tool_call`` or ``plan`` would pass as one. So each tagged value toolwire writes
is also checked to carry a tag the v2 schema names.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.helpers import REPO

SCHEMA = REPO / "tests/node/node_modules/@agentclientprotocol/sdk/schema/v2/schema.json"
_URI = "urn:toolwire-tests:acp-schema-v2"

#: What each of our requests' answers and our own requests are checked as.
ANSWERS = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/prompt": "PromptResponse",
    "session/resume": "ResumeSessionResponse",
    "session/set_config_option": "SetSessionConfigOptionResponse",
    "auth/logout": "LogoutAuthResponse",
}
REQUESTS = {
    "session/request_permission": "RequestPermissionRequest",
    "elicitation/create": "CreateElicitationRequest",
}


@cache
def _load() -> dict[str, Any] | None:
    if not SCHEMA.is_file():
        return None
    loaded: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return loaded


def schema() -> dict[str, Any]:
    """The ACP v2 draft schema; the test skips when the npm package is not installed."""
    found = _load()
    if found is None:
        pytest.skip("no ACP v2 schema: run `make node-deps` (npm) to install it")
    return found


@cache
def _validator(name: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resource(_URI, Resource.from_contents(schema()))
    return Draft202012Validator({"$ref": f"{_URI}#/$defs/{name}"}, registry=registry)


def valid(name: str, instance: Any) -> None:
    """``instance`` is a valid ``#/$defs/<name>``."""
    errors = sorted(_validator(name).iter_errors(instance), key=str)
    assert not errors, f"{name}: {errors[0].message} in {json.dumps(instance)[:300]}"


def update_kinds() -> set[str]:
    """The ``sessionUpdate`` tags v2 defines."""
    branches = schema()["$defs"]["SessionUpdate"]["anyOf"]
    return {b["properties"]["sessionUpdate"]["const"] for b in branches if "title" not in b}


def check_update(session_id: str, update: dict[str, Any]) -> None:
    """One ``session/update`` payload: a v2 kind, valid per the schema."""
    assert update["sessionUpdate"] in update_kinds(), update["sessionUpdate"]
    for item in _content_items(update):
        assert item["type"] in ("content", "diff", "terminal"), item
    valid("UpdateSessionNotification", {"sessionId": session_id, "update": update})


def _content_items(update: dict[str, Any]) -> list[dict[str, Any]]:
    content = update.get("content")
    if update["sessionUpdate"] == "tool_call_content_chunk":
        return [content] if isinstance(content, dict) else []
    if update["sessionUpdate"] == "tool_call_update":
        return content if isinstance(content, list) else []
    return []


def check_wire(sent: list[dict[str, Any]], asked: dict[Any, str]) -> int:
    """Every message an agent wrote (``asked``: the client's request ids and methods)."""
    for message in sent:
        assert message.get("jsonrpc") == "2.0"
        method = message.get("method")
        if method == "session/update":
            check_update(message["params"]["sessionId"], message["params"]["update"])
        elif method is not None:
            valid(REQUESTS[method], message["params"])
        elif "result" in message:
            valid(ANSWERS[asked[message["id"]]], message["result"])
        else:
            pytest.fail(f"an error answer: {message}")
    return len(sent)
