"""The ``authMethods`` ``initialize`` offers: what the ACP registry's check requires.

* ``env`` (type ``agent``): the keys are the environment's or ``toolwire login``'s;
  ``authenticate`` checks the default backend has one (``toolwire.agent.auth``).
* ``login`` (type ``terminal``): the client runs the agent's own command with
  ``--login`` appended in a terminal, where ``toolwire login`` asks for a backend's key
  and stores it. ACP lets an agent offer a terminal method only to a client that
  advertised ``clientCapabilities.auth.terminal``, so it depends on what the client said.
"""

from __future__ import annotations

from typing import Any, Final

#: The ``agent`` method's id.
ENV_METHOD: Final = "env"
#: The ``terminal`` method's id (never passed to ``authenticate``).
LOGIN_METHOD: Final = "login"
#: What the client appends to the agent's command line for the terminal method.
LOGIN_ARGS: Final = ("--login",)


def auth_methods(client_capabilities: Any = None) -> list[dict[str, Any]]:
    """The methods for a client that sent ``client_capabilities`` (the raw JSON)."""
    methods: list[dict[str, Any]] = [
        {
            "id": ENV_METHOD,
            "name": "API keys from the environment or the config",
            "description": "Each backend reads its key from the variable its config names "
            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) or from a key toolwire login stored.",
        }
    ]
    if _terminal(client_capabilities):
        methods.append(
            {
                "type": "terminal",
                "id": LOGIN_METHOD,
                "name": "Log in with an API key",
                "description": "Asks which backend and its key, and stores the key where "
                "only you can read it (the system keyring when there is one).",
                "args": list(LOGIN_ARGS),
            }
        )
    return methods


def _terminal(caps: Any) -> bool:
    auth = caps.get("auth") if isinstance(caps, dict) else None
    return isinstance(auth, dict) and auth.get("terminal") is True


__all__ = ["ENV_METHOD", "LOGIN_ARGS", "LOGIN_METHOD", "auth_methods"]
