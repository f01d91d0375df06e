"""``python -m toolwire``: the same command line as the ``toolwire`` script."""

from __future__ import annotations

from toolwire.cli import main

if __name__ == "__main__":
    main()
