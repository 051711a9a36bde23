"""Moved to :mod:`bench.results.store`; this import path stays for one release (0.4.x).

The name is bound to the same module object, so attributes read or patched through either path
are the same.
"""

import sys

from bench.results import store as _moved

sys.modules[__name__] = _moved
