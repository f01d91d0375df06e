"""Start-up: how long ``toolwire decode`` and ``toolwire acp`` take before they are useful.

Each command runs as a user runs it (the console script, a fresh process) and is compared
with a bare ``python -c pass`` on the same machine, so the ratio carries over between
machines where the milliseconds do not:

* ``decode``: the bundled sample decoded, from spawn to exit;
* ``acp``: from spawn to the ``initialize`` answer on stdout (what an editor waits for
  before it shows the agent as ready), in an empty HOME (the built-in configuration).

The median of N runs each (``--runs``, default 20), after one warm-up run of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

BIN = Path(sys.executable).parent
TOOLWIRE = str(BIN / "toolwire")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}},
}


def _bare(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


def _decode(env: dict[str, str]) -> float:
    sample = str(resources.files("toolwire.samples").joinpath("anthropic_edit.sse"))
    start = time.perf_counter()
    subprocess.run([TOOLWIRE, "decode", sample], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _acp(env: dict[str, str]) -> float:
    line = (json.dumps(INITIALIZE) + "\n").encode()
    start = time.perf_counter()
    agent = subprocess.Popen(
        [TOOLWIRE, "acp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert agent.stdin is not None
    assert agent.stdout is not None
    agent.stdin.write(line)
    agent.stdin.flush()
    answer = agent.stdout.readline()
    elapsed = time.perf_counter() - start
    agent.stdin.close()  # end of input: the agent exits
    agent.wait(timeout=30)
    assert json.loads(answer)["id"] == 0, answer
    return elapsed


def _median(measure: Callable[[dict[str, str]], float], env: dict[str, str], runs: int) -> float:
    measure(env)  # warm-up: the page cache, not the command, pays for the first read
    return statistics.median(measure(env) for _ in range(runs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as home:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": str(Path(home) / "config"),
            "XDG_DATA_HOME": str(Path(home) / "data"),
        }
        bare = _median(_bare, env, runs)
        rows = [
            ("python -c pass", bare),
            ("toolwire decode (bundled sample)", _median(_decode, env, runs)),
            ("toolwire acp (spawn to initialize answer)", _median(_acp, env, runs)),
        ]
    print(f"median of {runs} runs, Python {sys.version.split()[0]}\n")
    print("| command | median ms | x bare python |")
    print("| --- | ---: | ---: |")
    for name, seconds in rows:
        print(f"| {name} | {seconds * 1000:.0f} | {seconds / bare:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
