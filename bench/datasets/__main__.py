"""Regenerate the dataset docs page from the card data.

Example:
    python -m bench.datasets docs/datasets.md
"""

import logging
import sys

from bench.datasets.cards import write_docs

logger = logging.getLogger(__name__)

if __name__ == "__main__":
    write_docs(sys.argv[1] if len(sys.argv) > 1 else "docs/datasets.md")
