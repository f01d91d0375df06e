"""``authenticate``: the ``env`` method succeeds when the default backend has its key.

toolwire holds no accounts: a backend is reached with the key its config names
(``api_key_env``), from the environment or stored by ``toolwire login``
(``toolwire.config.keys``). So authenticating is checking that key is there, and when
it is not, saying in the error which variable to set (never a key: there is none to
show). The ``terminal`` method is the client's to run, never passed here (ACP). An
``env_var`` method (one per provider) succeeds when its variable is set, or stored.
"""

from __future__ import annotations

import os

from acp.exceptions import RequestError

from toolwire.agent.protocol.auth_methods import ENV_METHOD, KEY_METHODS, LOGIN_METHOD
from toolwire.config import Config
from toolwire.config.keys import forget_key, stored_key, stored_names


def authenticate(config: Config, method_id: str) -> None:
    """Return when ``method_id`` succeeds; else raise the ``RequestError`` to answer."""
    if method_id == LOGIN_METHOD:
        raise RequestError.invalid_params(
            {"methodId": "login is a terminal method: run the agent with --login instead"}
        )
    if method_id in KEY_METHODS:
        return _key_set(KEY_METHODS[method_id])
    if method_id != ENV_METHOD:
        raise RequestError.invalid_params({"methodId": f"no auth method {method_id!r}"})
    if config.no_backend is not None:
        raise RequestError.auth_required({"details": config.no_backend})
    backend = config.backends[config.default_backend]
    if backend.api_key_env is None or backend.api_key() is not None:
        return
    raise RequestError.auth_required(
        {
            "details": f"backend {backend.name!r} needs an API key: set "
            f"${backend.api_key_env}, or run `toolwire login {backend.name}`",
            "variable": backend.api_key_env,
        }
    )


def _key_set(variable: str) -> None:
    if os.environ.get(variable) or stored_key(variable):
        return
    raise RequestError.auth_required(
        {"details": f"${variable} is not set: launch the agent with it", "variable": variable}
    )


def logout() -> list[str]:
    """``auth/logout`` (v2): forget every key ``toolwire login`` stored, as ``toolwire
    logout`` does; the variables it was stored for. Keys the environment sets belong to
    the user's shell, not toolwire: they stay, and the ``env`` method still finds them."""
    return [name for name in stored_names() if forget_key(name)]


__all__ = ["authenticate", "logout"]
