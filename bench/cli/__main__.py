"""``python -m bench.cli``: the ``bench`` console script (:func:`bench.cli.main`)."""

import sys

from bench.cli import main

sys.exit(main())
