"""What ``toolwire proxy serve`` says before it serves, and the socket it serves on.

The block names everything an operator needs to know the proxy is the one they meant:
the address, the backends and where each fails over to, the session store, the ledger,
what guards it, telemetry. URLs are shown with their credentials masked.

``listen`` binds the socket before uvicorn starts, so a port out of range or taken is
one line naming it (uvicorn would take 99999 modulo 65536 through ``getaddrinfo`` and
listen elsewhere, and print its own traceback-like error for a taken port).
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable

from toolwire.proxy.failover import chain
from toolwire.proxy.settings import ProxySettings
from toolwire.proxy.stores.redis import is_redis_url
from toolwire.proxy.telemetry import ENDPOINT_ENVS
from toolwire.secrets import mask_urls

PORTS = range(1, 65536)


class PortError(Exception):
    """The port cannot be served on; the message is one line naming it."""


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; ``PortError`` in one line if not."""
    if port not in PORTS:
        raise PortError(f"--port {port} is out of range: a port is 1 to 65535")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise PortError(f"--host {host}: cannot resolve it ({e.strerror})") from e
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as e:
        sock.close()
        raise PortError(_bind_error(host, port, e)) from e
    sock.set_inheritable(True)
    return sock


def _bind_error(host: str, port: int, e: OSError) -> str:
    if e.errno == errno.EADDRINUSE:
        return f"--port {port} is in use on {host}: stop what listens there or pick another port"
    if e.errno == errno.EACCES:
        return f"--port {port} on {host} needs privileges: pick a port above 1023"
    if e.errno == errno.EADDRNOTAVAIL:
        return f"--host {host} is not an address of this machine (port {port})"
    return f"--port {port} on {host}: cannot listen ({e.strerror or e})"


def startup_block(settings: ProxySettings, host: str, port: int, keys: Callable[[], int]) -> str:
    """The lines ``toolwire proxy serve`` prints first; ``keys()``: how many people's keys
    the store holds (it may raise: the block says the store could not be read)."""
    where = f"[{host}]" if ":" in host else host
    lines = [f"toolwire proxy listening on http://{where}:{port}"]
    lines += ["  backends:"] + [f"    {line}" for line in _backends(settings)]
    lines.append(f"  session store: {_store(settings)}")
    lines.append(f"  ledger: {_ledger(settings)}")
    lines.append(f"  guarded by: {_guard(settings, keys)}")
    lines.append(f"  admin: {_admin(settings)}")
    lines.append(f"  telemetry: {_telemetry()}")
    return "\n".join(lines)


def _backends(settings: ProxySettings) -> list[str]:
    backends = settings.config.backends
    fallbacks = {n: b.fallbacks for n, b in backends.items()}
    found = []
    for name, backend in backends.items():
        walk = chain(name, fallbacks)
        over = " -> ".join(walk[1:]) if len(walk) > 1 else "no failover"
        default = " (default)" if name == settings.default_backend else ""
        found.append(f"{name}{default}: {backend.provider} {backend.model}; fails over: {over}")
    return found


def _store(settings: ProxySettings) -> str:
    spec = settings.store
    if spec == "memory":
        return "memory (this process only; keys need a shared store)"
    if is_redis_url(spec):
        ttl = f", idle sessions kept {settings.store_ttl} s" if settings.store_ttl else ""
        return f"Redis {mask_urls(spec)}{ttl}"
    return f"SQLite {spec}"


def _ledger(settings: ProxySettings) -> str:
    spec = settings.ledger
    if not spec:
        return "none (set [proxy] ledger to record spend)"
    if spec.startswith(("postgresql://", "postgres://")):
        return f"PostgreSQL {mask_urls(spec)}"
    return f"SQLite {spec}"


def _guard(settings: ProxySettings, keys: Callable[[], int]) -> str:
    try:
        count = keys()
    except Exception as e:  # the proxy still serves: say what could not be read
        return f"unknown: the store could not be read ({type(e).__name__})"
    if count:
        return f"people's keys ({count} active)"
    if settings.token:
        return "the single [proxy] token"
    return "nothing: anyone who can reach it may use it"


def _admin(settings: ProxySettings) -> str:
    env = settings.admin_token_env
    if env:
        return f"the admin token in ${env}, or admin keys"
    return "admin keys only (no [proxy] admin_token_env)"


def _telemetry() -> str:
    for name in ENDPOINT_ENVS:
        if os.environ.get(name):
            return f"OTLP spans to {mask_urls(os.environ[name])}"
    return "off (set OTEL_EXPORTER_OTLP_ENDPOINT to export spans)"


__all__ = ["PORTS", "PortError", "listen", "startup_block"]
