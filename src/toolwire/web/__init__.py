"""The network under ``WebFetch``: what a fetch may reach, and the fetch itself.

Use::

    fetcher = Fetcher(WebSettings.from_config(config.tools.web))
    ctx = ToolContext.create(cwd, web=fetcher)       # WebFetch fetches through it

``address`` is pure (which IP addresses are refused, how a literal host is read, the
``allow_hosts`` patterns); ``resolve`` resolves a hop once and picks a vetted address;
``dial`` connects to that address with httpcore2, keeping the URL's host for ``Host``
and TLS; ``fetch`` follows redirects under one deadline and one byte cap, and caches;
``decode`` turns the body into text (HTML into Markdown with markdownify).
"""

from __future__ import annotations

from toolwire.web.address import allowed, literal_address, refusal
from toolwire.web.errors import FetchError, RefusedError
from toolwire.web.fetch import CACHE_SECONDS, MAX_REDIRECTS, Fetcher, WebSettings

__all__ = [
    "CACHE_SECONDS",
    "MAX_REDIRECTS",
    "FetchError",
    "Fetcher",
    "RefusedError",
    "WebSettings",
    "allowed",
    "literal_address",
    "refusal",
]
