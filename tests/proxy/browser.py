"""Debian's Chromium, headless, driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ended by a NUL byte on file descriptors 3
and 4), so a test needs no WebDriver and no WebSocket library.

``chromium_binary`` finds it (``make deps`` installs it as root with apt-get); a test
without it skips in one line before anything starts.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

_NAMES = ("chromium", "chromium-browser", "google-chrome")
_TIMEOUT = 30.0


def chromium_binary() -> str | None:
    """The browser's path, or None."""
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless browser and one page of it."""

    def __init__(self, binary: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="toolwire-chromium-")
        to_browser, self._out = os.pipe()  # it reads fd 3
        self._in, from_browser = os.pipe()  # it writes fd 4
        args = ["--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                "--window-size=1280,2400", f"--user-data-dir={self._profile}"]  # fmt: skip
        # bash, not sh: dash takes only one-digit descriptors in a redirection.
        shell = f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser}'
        self._process = subprocess.Popen(
            [shutil.which("bash") or "bash", "-c", shell, binary, *args, "about:blank"],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)

    def call(self, method: str, *, session: bool = False, **params: Any) -> Any:
        """Send one command and wait for its answer (events meanwhile are kept)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + _TIMEOUT
        while b"\0" not in self._buffer:
            assert time.monotonic() < deadline, "the browser did not answer in time"
            chunk = os.read(self._in, 1 << 20)
            assert chunk, "the browser closed its pipe"
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(raw)
        return found

    def wait_for_load(self) -> None:
        """Until the page's ``load`` event (one after the last call)."""
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == "Page.loadEventFired":
                    del self._events[: i + 1]
                    return
            self._events.append(self._read())

    def go(self, url: str) -> None:
        self._events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for_load()

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)  # fmt: skip
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        """The whole page as PNG."""
        shot = self.call("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=True)  # fmt: skip
        return base64.b64decode(shot["data"])

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError, RuntimeError):
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._out)
        os.close(self._in)
        shutil.rmtree(self._profile, ignore_errors=True)
