"""A command's agent-owned terminal in an ACP v2 session.

v2 has no client terminals: the agent runs the command and owns the terminal. The card
shows it as ``{"type": "terminal"}`` content; the terminal is made with a
``terminal_update`` (command, cwd), its output is appended with
``terminal_output_chunk`` (each byte once, base64 as v2 asks), and its end is a
``terminal_update`` with the exit status. Output is coalesced for ``INTERVAL`` seconds
so a command that prints in small pieces does not cost one notification per piece:
the bytes on the wire stay close to base64's 4/3 of the output.
"""

from __future__ import annotations

import asyncio
from typing import Final

from toolwire.agent.protocol.outbox import Outbox
from toolwire.updates.v2 import terminal_exited, terminal_output, terminal_started

#: Seconds output is held before it is sent (the update engine's frame interval).
INTERVAL: Final = 0.05


class AgentTerminal:
    """One command's terminal: made, appended to, ended; see the module doc."""

    def __init__(self, outbox: Outbox, terminal_id: str, command: str, cwd: str) -> None:
        self.terminal_id = terminal_id
        self._outbox = outbox
        self._held = bytearray()
        self._timer: asyncio.TimerHandle | None = None
        outbox.update(terminal_started(terminal_id, command, cwd))

    def output(self, text: str) -> None:
        """More output: held, and sent within ``INTERVAL``."""
        self._held += text.encode("utf-8", "surrogatepass")
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(INTERVAL, self.flush)

    def flush(self) -> None:
        """Send the output held so far."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._held:
            data, self._held = bytes(self._held), bytearray()
            self._outbox.update(terminal_output(self.terminal_id, data))

    def exit(self, exit_code: int | None) -> None:
        """The command ended: the rest of its output, then its exit status."""
        self.flush()
        self._outbox.update(terminal_exited(self.terminal_id, exit_code))


__all__ = ["INTERVAL", "AgentTerminal"]
