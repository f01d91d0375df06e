"""The ACP registry's checks, as its CI runs them (docs/registry.md): the entry's rules,
the icon's, and the auth check on a running agent.

The auth check starts the agent as the registry's sandbox does (a fresh ``HOME``, no key
set or stored, ``PATH`` and little else), sends one ``initialize``, reads ONE line of
stdout and wants it to be the answer, with an auth method of type ``agent`` or
``terminal`` among its ``authMethods`` (no ``type`` counts as ``agent``).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

#: What the registry's client asks with (version 1, its usual capabilities).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientInfo": {"name": "registry-auth-check", "version": "1.0.0"},
        "clientCapabilities": {
            "terminal": True,
            "fs": {"readTextFile": True, "writeTextFile": True},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
    },
}
#: The only variables of the caller's environment the sandbox passes on.
PASSED_ON = ("PATH", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "UV_CACHE_DIR")
SEMVER = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
ID = re.compile(r"[a-z][a-z0-9-]*")
TOP_LEVEL = {
    *("id", "name", "version", "description", "distribution"),
    *("repository", "website", "authors", "license", "license_url", "icon"),
}
URI_FIELDS = ("repository", "website", "license_url")
PACKAGE_KEYS = {"package", "args", "env"}
PAINT = {"currentcolor", "none", "inherit"}


def auth_check(command: list[str], timeout: float = 60) -> list[dict[str, Any]]:
    """Run ``command`` as the registry's sandbox does; the ``authMethods`` it answered
    (fails the test if the first stdout line is not the answer)."""
    with tempfile.TemporaryDirectory(prefix="registry-home-") as home:
        env = {k: v for k in PASSED_ON if (v := os.environ.get(k))}
        env |= {"HOME": home, "TERM": "dumb"}
        with subprocess.Popen(
            command,
            cwd=home,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(INITIALIZE) + "\n")
                proc.stdin.flush()
                line = _first_line(proc, timeout)
            finally:
                proc.kill()
                proc.communicate()
        answer = json.loads(line)  # anything but the JSON-RPC answer fails the check
        assert answer.get("id") == 1, answer
        assert "result" in answer, answer
        methods: list[dict[str, Any]] = answer["result"].get("authMethods") or []
        assert any(m.get("type", "agent") in ("agent", "terminal") for m in methods), methods
        return methods


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise AssertionError(f"no answer to initialize within {timeout} s")
    line = proc.stdout.readline()
    assert line, f"the agent wrote nothing and exited {proc.poll()}"
    return line


def entry_errors(entry: dict[str, Any], folder: str) -> list[str]:
    """What the registry would refuse in ``entry`` (``agent.json`` in ``folder``)."""
    errors = [f"missing {k}" for k in ("id", "name", "version", "description") if not entry.get(k)]
    errors += [f"unknown field {k}" for k in sorted(set(entry) - TOP_LEVEL)]
    if not ID.fullmatch(str(entry.get("id"))) or entry.get("id") != folder:
        errors.append(f"id {entry.get('id')!r}: lowercase, hyphens, the folder's name {folder!r}")
    version = str(entry.get("version"))
    if not SEMVER.match(version):
        errors.append(f"version {version!r} is not semantic")
    errors += [f"{k} is not a URI" for k in URI_FIELDS if k in entry and "://" not in entry[k]]
    distribution = entry.get("distribution")
    if not isinstance(distribution, dict) or not distribution:
        return [*errors, "distribution must be a non-empty object"]
    errors += [f"distribution {k!r}" for k in distribution if k not in ("binary", "npx", "uvx")]
    uvx = distribution.get("uvx")
    if isinstance(uvx, dict):
        errors += [f"uvx.{k} unknown" for k in set(uvx) - PACKAGE_KEYS]
        package = str(uvx.get("package", ""))
        pinned = re.search(r"[=@]+([\d.]+)", package)
        if not package or "latest" in package.lower() or not pinned or pinned[1] != version:
            errors.append(f"uvx.package {package!r} must be pinned to version {version}")
    return errors


def icon_errors(path: Path) -> list[str]:
    """What the registry would refuse in ``icon.svg``."""
    text = path.read_text(encoding="utf-8")
    errors = ["comments break the registry's pages"] if "<!--" in text else []
    root = ET.fromstring(text)
    if root.tag.rsplit("}", 1)[-1] != "svg":
        return [*errors, f"the root is <{root.tag}>, not <svg>"]
    size = _size(root)
    if size != (16.0, 16.0):
        errors.append(f"{size}: must be 16x16")
    paints = [p.strip().lower() for p in _paints(root)]
    errors += [f"hard-coded color {p!r}: use currentColor" for p in paints if p not in PAINT]
    if "currentcolor" not in paints:
        errors.append("nothing is painted in currentColor")
    return errors


def _size(root: ET.Element) -> tuple[float, float] | None:
    width, height = root.get("width"), root.get("height")
    if width and height:
        return float(re.sub(r"[a-z%]+$", "", width)), float(re.sub(r"[a-z%]+$", "", height))
    box = (root.get("viewBox") or "").split()
    return (float(box[2]), float(box[3])) if len(box) == 4 else None


def _paints(root: ET.Element) -> list[str]:
    """Every fill and stroke: attributes, inline styles and <style> rules."""
    found: list[str] = []
    for element in root.iter():
        found += [v for k in ("fill", "stroke") if (v := element.get(k)) is not None]
        for rule in (element.get("style") or "").split(";"):
            name, _, value = rule.partition(":")
            if name.strip().lower() in ("fill", "stroke"):
                found.append(value)
        if element.tag.rsplit("}", 1)[-1] == "style" and element.text:
            found += re.findall(r"\b(?:fill|stroke)\s*:\s*([^;}\s]+)", element.text)
    return found
