"""The Gemini API dialect in (docs/proxy.md, "Gemini clients").

Routes: ``POST /v1beta/models/{model}:generateContent``, ``:streamGenerateContent``
(SSE with ``alt=sse``), ``:countTokens`` (the same under ``/v1``), ``GET /v1beta/models``
and ``/v1beta/models/{model}``.
The request is read into the neutral request (``gemini_import`` for ``contents``; here
``systemInstruction``, ``tools``, ``toolConfig``, ``generationConfig``) and planned,
sent and metered as ``/v1/messages``; the answer is encoded back by ``gemini_encode``.
The session is the ``x-toolwire-session`` header's (gemini-cli sends no session id on the
Gemini API: ``GEMINI_CLI_CUSTOM_HEADERS`` can add the header), else a digest of the
first content, which every request of a conversation repeats.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from toolwire.backends.anthropic import build_body as anthropic_body
from toolwire.backends.base import ModelRequest, OutputFormat, ToolChoice
from toolwire.config.choices import ThoughtLevel
from toolwire.history import ToolSpec
from toolwire.proxy.dialects.base import (
    DialectRelay,
    DialectRoute,
    Host,
    Imported,
    NotFoundError,
    Payload,
)
from toolwire.proxy.dialects.gemini_encode import GeminiEncoder, error_body
from toolwire.proxy.dialects.gemini_import import camel_keys, import_contents
from toolwire.proxy.endpoints import served_models
from toolwire.proxy.errors import BadRequestError, ProxyError
from toolwire.proxy.relay import Answering, Relay
from toolwire.proxy.state import IMPLICIT_SESSION, check_session, session_id
from toolwire.proxy.translate import MAX_OUTPUT_TOKENS

_STREAMED = {"generateContent": False, "streamGenerateContent": True}
_METHODS = ["generateContent", "streamGenerateContent", "countTokens"]
# The budgets ``backends._thinking`` gives each level, read the other way.
_LEVELS: tuple[tuple[int, ThoughtLevel], ...] = ((2048, "low"), (8192, "medium"))


def imported(raw: Any, model: str, headers: Mapping[str, str], *, stream: bool) -> Imported:
    """A ``generateContent`` body for ``model`` in the planner's terms."""
    if not isinstance(raw, dict):
        raise BadRequestError("the request body must be a JSON object")
    raw = camel_keys(raw)
    history = import_contents(raw.get("contents"))
    config = raw.get("generationConfig") or {}
    if not isinstance(config, dict):
        raise BadRequestError("generationConfig: an object is required")
    tokens = config.get("maxOutputTokens", MAX_OUTPUT_TOKENS)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
        raise BadRequestError("generationConfig.maxOutputTokens: a positive integer is required")
    temperature = config.get("temperature")
    tools = _tools(raw.get("tools"), raw.get("toolConfig"))
    request = ModelRequest(
        system=_system(raw.get("systemInstruction")),
        messages=history,
        tools=tools,
        max_tokens=min(tokens, MAX_OUTPUT_TOKENS),
        temperature=float(temperature) if isinstance(temperature, int | float) else None,
        thinking=_thinking(config.get("thinkingConfig")),
        tool_choice=_choice(raw.get("toolConfig"), tools),
        stop=_stops(config),
        output=_output(config),
    )
    body = anthropic_body(request, model=model, backend="")
    body["stream"] = stream
    body["metadata"] = {"user_id": json.dumps({"session_id": _session(raw, headers)})}
    return Imported(body, _relay, request)


def _relay(answering: Answering) -> Relay:
    # json_args is not read: calls are sent whole, from their parsed arguments
    return DialectRelay(partial(GeminiEncoder, answering))


def _system(instruction: Any) -> str:
    if isinstance(instruction, str):
        return instruction
    parts = instruction.get("parts") if isinstance(instruction, dict) else None
    texts = [p.get("text") for p in parts or () if isinstance(p, dict)]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t)


def _calling(config: Any) -> dict[str, Any]:
    calling = config.get("functionCallingConfig") if isinstance(config, dict) else None
    return calling if isinstance(calling, dict) else {}


def _tools(tools: Any, config: Any) -> tuple[ToolSpec, ...]:
    """The function declarations offered, as ``toolConfig`` allows: none with mode
    ``NONE``, only ``allowedFunctionNames`` when it names some."""
    calling = _calling(config)
    if str(calling.get("mode", "")).upper() == "NONE":
        return ()
    allowed = calling.get("allowedFunctionNames")
    out: list[ToolSpec] = []
    for tool in tools if isinstance(tools, list) else ():
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for declaration in declarations or ():
            spec = _declaration(declaration)
            if not allowed or spec.name in allowed:
                out.append(spec)
    return tuple(out)


def _choice(config: Any, tools: tuple[ToolSpec, ...]) -> ToolChoice | None:
    """Mode ``ANY`` forces a call: of the one function offered by name when
    ``allowedFunctionNames`` left one, else of any (the others choose)."""
    if str(_calling(config).get("mode", "")).upper() != "ANY" or not tools:
        return None
    return ToolChoice(tools[0].name) if len(tools) == 1 else ToolChoice()


def _stops(config: Mapping[str, Any]) -> tuple[str, ...]:
    stops = config.get("stopSequences")
    if stops is None:
        return ()
    if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
        raise BadRequestError("generationConfig.stopSequences: a list of strings is required")
    return tuple(s for s in stops if s)


def _output(config: Mapping[str, Any]) -> OutputFormat | None:
    """``responseMimeType`` ``application/json`` with its schema (``responseJsonSchema``,
    or ``responseSchema`` read as JSON Schema); ``candidateCount`` above 1 refused."""
    count = config.get("candidateCount")
    if count is not None and count != 1:
        raise BadRequestError(
            "generationConfig.candidateCount: the proxy answers with one candidate per"
            " request; leave it out (or 1) and send one request per candidate"
        )
    mime = config.get("responseMimeType")
    if mime in (None, "", "text/plain"):
        return None
    if mime != "application/json":
        raise BadRequestError(
            f"generationConfig.responseMimeType: {mime!r} is not carried; use text/plain"
            " or application/json"
        )
    schema = config.get("responseJsonSchema")
    if not isinstance(schema, dict) and isinstance(config.get("responseSchema"), dict):
        schema = json_schema(config["responseSchema"])
    return OutputFormat(schema if isinstance(schema, dict) else None)


def _declaration(declaration: Any) -> ToolSpec:
    if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
        raise BadRequestError("tools.functionDeclarations: each needs a name")
    schema = declaration.get("parametersJsonSchema")
    if not isinstance(schema, dict):
        schema = json_schema(declaration.get("parameters") or {"type": "object"})
    description = str(declaration.get("description") or "")
    return ToolSpec(declaration["name"], description, schema)


def json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-subset ``Schema`` as JSON Schema: type names in lower case,
    ``nullable`` as a type list."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: json_schema(v) for k, v in schema.items() if k != "nullable"}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
        if schema.get("nullable"):
            out["type"] = [out["type"], "null"]
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: json_schema(v) for k, v in schema["properties"].items()}
    return out


def _thinking(config: Any) -> ThoughtLevel:
    """``thinkingConfig`` as a level; off unless the client asked to see thoughts (a
    backend's thinking then goes back to it with its signature)."""
    if not isinstance(config, dict) or not config.get("includeThoughts"):
        return "off"
    level = str(config.get("thinkingLevel", "")).lower()
    if level in ("minimal", "low"):
        return "low"
    if level in ("medium", "high"):
        return "high" if level == "high" else "medium"
    budget = config.get("thinkingBudget", -1)
    if not isinstance(budget, int) or budget < 0:
        return "medium"  # dynamic thinking: the model's choice
    if budget == 0:
        return "off"
    return next((name for top, name in _LEVELS if budget <= top), "high")


def _session(raw: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    sid = session_id({}, headers)
    if sid != IMPLICIT_SESSION:
        return sid
    first = json.dumps(raw["contents"][0], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(first.encode("utf-8", "replace")).hexdigest()[:32]
    return check_session(f"gemini-{digest}")


# -- routes ----------------------------------------------------------------------------


async def _listing(host: Host, request: Request) -> Response:
    """``GET /v1beta/models``: what ``GET /v1/models`` lists, in Gemini's form."""
    await host.intake.authorize(request)
    served = served_models(host.settings)
    return JSONResponse({"models": [_model(i, shown) for i, shown in served]})


async def _described(host: Host, request: Request) -> Response:
    """``GET /v1beta/models/{model}``: one model (any name routes, so none is unknown)."""
    await host.intake.authorize(request)
    name = str(request.path_params["target"]).removeprefix("models/")
    shown = dict(served_models(host.settings)).get(name, name)
    return JSONResponse(_model(name, shown))


async def _action(host: Host, request: Request) -> Response:
    """``{model}:generateContent``, ``:streamGenerateContent`` or ``:countTokens``."""
    model, _, method = str(request.path_params["target"]).rpartition(":")
    if not model or method not in _METHODS:
        raise NotFoundError(f"unknown method {method!r}: the proxy serves {', '.join(_METHODS)}")
    raw = await host.intake.body(request)
    model = model.removeprefix("models/")
    if method == "countTokens":
        inner = camel_keys(raw).get("generateContentRequest") if isinstance(raw, dict) else None
        got = imported(inner or raw, model, request.headers, stream=False)
        return JSONResponse({"totalTokens": await host.count(got, request)})
    got = imported(raw, model, request.headers, stream=_STREAMED[method])
    return await host.serve(got, request)


def _model(name: str, shown: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "displayName": shown,
        "supportedGenerationMethods": list(_METHODS),
    }


class Gemini:
    """The Gemini API dialect."""

    name = "gemini"
    routes = (
        DialectRoute("/v1beta/models", _listing, ("GET",)),
        DialectRoute("/v1beta/models/{target:path}", _described, ("GET",)),
        DialectRoute("/v1beta/models/{target:path}", _action),
        # The Python SDK's default version; its listing stays Anthropic's ``/v1/models``.
        DialectRoute("/v1/models/{target:path}", _action),
    )

    def error(self, exc: ProxyError) -> Payload:
        return error_body(exc.status, exc.message)


__all__ = ["Gemini", "imported", "json_schema"]
