"""Moved to :mod:`bench.tools.findings` (a maintainer tool); ``python -m bench.findings``
still prints the block of ``docs/findings.md``.
"""

import sys

from bench.tools.findings import BEGIN, END, fmt, fmt_delta, main, paired, render, t_interval

__all__ = ["BEGIN", "END", "fmt", "fmt_delta", "main", "paired", "render", "t_interval"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
