"""``toolwire proxy``: an Anthropic-compatible proxy that routes to any configured backend.

See docs/proxy.md. ``create_app(load_settings(path))`` is the ASGI app.
"""

from __future__ import annotations

from toolwire.proxy.app import Proxy, create_app
from toolwire.proxy.settings import ProxySettings, load_settings

__all__ = ["Proxy", "ProxySettings", "create_app", "load_settings"]
