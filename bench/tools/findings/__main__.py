"""``python -m bench.tools.findings``."""

import sys

from bench.tools.findings import main

sys.exit(main())
