"""Fakes and helpers for testing ACP agents and clients built on toolwire.

``connect_in_memory`` (``testing.memory``): an SDK client and agent joined in one
process. ``FunctionBackend`` (``testing.function``): a model whose answer is a Python
function of the request, streamed through toolwire's decoder, or an ``ErrorResponse``.
``testing.sdk``: the round trip of the engine's notifications through the official
SDK's models.
``testing.record``: a JSON-lines recorder of ACP traffic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolwire.testing.function import ErrorResponse, FunctionBackend
    from toolwire.testing.memory import InMemoryConnection, connect_in_memory
    from toolwire.testing.sdk import round_trip, sdk_params, to_sdk, to_sdk_update

_LAZY = {
    "ErrorResponse": "toolwire.testing.function",
    "FunctionBackend": "toolwire.testing.function",
    "InMemoryConnection": "toolwire.testing.memory",
    "connect_in_memory": "toolwire.testing.memory",
    "round_trip": "toolwire.testing.sdk",
    "sdk_params": "toolwire.testing.sdk",
    "to_sdk": "toolwire.testing.sdk",
    "to_sdk_update": "toolwire.testing.sdk",
}


def __getattr__(name: str) -> Any:
    # Lazy: importing the recorder (``testing.record``) must not load the ACP SDK.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire.testing' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "ErrorResponse",
    "FunctionBackend",
    "InMemoryConnection",
    "connect_in_memory",
    "round_trip",
    "sdk_params",
    "to_sdk",
    "to_sdk_update",
]
