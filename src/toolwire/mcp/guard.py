"""A stdio server's keeper: run as a script, it ties the server's life to the agent's.

``python guard.py AGENT_PID COMMAND [ARGS...]`` runs the server as its child, in its
own process group (the SDK starts the keeper as a session leader), with the stdio
pipes handed straight through. When the agent dies, even by SIGKILL, which no handler
sees, the keeper notices that its parent changed and SIGKILLs its whole group: the
server, however it treats SIGTERM and its stdin's end, and the children it started.
Otherwise it only waits, and exits with the server's status.

It imports nothing from toolwire (it starts for every server, so it starts fast) and
is run by path, never as a module of the package.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL = 0.2
"""Seconds between looks at the parent: the most a server outlives a killed agent."""


def main(argv: list[str]) -> int:
    agent, command = int(argv[0]), argv[1:]
    # A handler, not SIG_IGN: the SDK's stop signals the whole group and the server
    # decides; an ignored disposition would be inherited by the server through exec.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    server = subprocess.Popen(command)
    # The pipes are the server's alone: its exit or its stdout's end is the agent's news.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    while True:
        status = server.poll()
        if status is not None:
            return status if status >= 0 else 128 - status
        if os.getppid() != agent:  # the agent is gone (its pid given: no race at start)
            if os.getpgrp() == os.getpid():  # the group is the server's, not a caller's
                os.killpg(0, signal.SIGKILL)
            server.kill()
            return 137
        time.sleep(POLL)


__all__ = ["POLL", "main"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
