"""The ``authMethods`` ``initialize`` offers: what the ACP registry's check requires.

* ``env`` (type ``agent``): the keys are the environment's or ``toolwire login``'s;
  ``authenticate`` checks the default backend has one (``toolwire.agent.auth``).
* ``login`` (type ``terminal``): the client runs the agent's own command with
  ``--login`` appended in a terminal, where ``toolwire login`` asks for a backend's key
  and stores it. ACP lets an agent offer a terminal method only to a client that
  advertised ``clientCapabilities.auth.terminal``, so it depends on what the client said.
* one ``env_var`` method per provider (its id the provider's: ``anthropic``, ``openai``,
  ``gemini``), listing the variable its key is read from: a client that launches the
  agent with that variable set (Harbor, the benchmark harness, picks the first method
  whose variables it has) signs in with it; ``authenticate`` checks it is set.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.providers import PROFILES

#: The ``agent`` method's id.
ENV_METHOD: Final = "env"
#: The ``terminal`` method's id (never passed to ``authenticate``).
LOGIN_METHOD: Final = "login"
#: What the client appends to the agent's command line for the terminal method.
LOGIN_ARGS: Final = ("--login",)
#: The ``env_var`` methods' ids and the variable each names: the detected providers', in
#: the order toolwire detects them (a provider's first variable is the one it documents).
KEY_METHODS: Final[dict[str, str]] = {
    d.name: d.key_envs[0] for p in PROFILES.values() if (d := p.detected) is not None
}


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
    methods.extend(_env_var(method_id, variable) for method_id, variable in KEY_METHODS.items())
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


def _env_var(method_id: str, variable: str) -> dict[str, Any]:
    return {
        "type": "env_var",
        "id": method_id,
        "name": f"{method_id} API key",
        "description": f"The agent was launched with ${variable} set; the model option "
        f"offers the {method_id} backend as {method_id}/MODEL.",
        "vars": [{"name": variable, "label": f"{method_id} API key"}],
    }


def _terminal(caps: Any) -> bool:
    auth = caps.get("auth") if isinstance(caps, dict) else None
    return isinstance(auth, dict) and auth.get("terminal") is True


__all__ = ["ENV_METHOD", "KEY_METHODS", "LOGIN_ARGS", "LOGIN_METHOD", "auth_methods"]
