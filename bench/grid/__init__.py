"""Experiment grids: YAML files -> validated, frozen :class:`Cell` specs.

A grid file (``experiments/*.yaml``, format reference in ``docs/grids.md``) lists values per
axis (dataset, model, mechanism, sensitivity, mapping, epsilon, seed) and the cartesian product
is expanded; ``exclude`` entries remove cells by partial match, ``include`` entries add cells,
``extends`` inherits another file, ``settings`` carries the run options. A baseline cell (no
privatization: mechanism ``none``, ε = ∞) is added for every dataset × model × seed.

Nothing here loads data, fits a mechanism or trains a model: names are checked against the
registries, parameters by constructing the (cheap, unfitted) components and against the
resource limits (:mod:`~bench.grid.limits`), so a bad grid fails in well under a second with
one :class:`GridError` naming the file and the key. Cells that are
well-formed but cannot run (a text-only model fed vectors, a selection mechanism with a vector
mapping, a mechanism refusing an ε, a dataset whose file is not configured) are not errors: they
land in :attr:`Grid.skipped` with the reason.

Example:
    >>> from bench.grid import load_grid
    >>> grid = load_grid("experiments/quickstart.yaml")
    >>> len(grid.cells), len(grid.skipped)
    (27, 0)
    >>> grid.cells[0].name                       # baselines come first
    'bbc(max_tokens=200,split=[0.6,0.2,0.2],stratify=entities,subsample=600):model=lstm,...'
    >>> grid.cells[0].hash                       # 16 hex digits, stable across runs
    '...'

The package follows that path: :mod:`~bench.grid.parse` reads the files (YAML, ``extends``),
:mod:`~bench.grid.validate` checks each value against the registries and gives the skip
reasons, :mod:`~bench.grid.expand` builds the cells, :mod:`~bench.grid.cell` is the record and
its hashes, :mod:`~bench.grid.schema` the allowed keys and defaults,
:mod:`~bench.grid.limits` the resource limits on the parameters that drive a cell's cost,
:mod:`~bench.grid.stored` the same checks on a stored spec (before ``bench verify --repair``
recomputes it), and :mod:`~bench.grid.summary` the text of ``bench validate``.
"""

from bench.grid.cell import Cell, cell_hash, privatization_hash
from bench.grid.components import ModelInfo, model_catalog
from bench.grid.expand import Grid, load_grid
from bench.grid.frozen import FrozenDict, canonical_json, freeze
from bench.grid.schema import (
    AXES,
    AXIS_DEFAULTS,
    BASELINE,
    FALLBACK_MODELS,
    METRIC_GROUPS,
    OPTIONAL_SETTINGS,
    REQUIRED_AXES,
    SETTINGS_DEFAULTS,
    TOP_KEYS,
    GridError,
)
from bench.grid.summary import cli_validate, validate_text

__all__ = [
    "AXES",
    "AXIS_DEFAULTS",
    "OPTIONAL_SETTINGS",
    "BASELINE",
    "FALLBACK_MODELS",
    "METRIC_GROUPS",
    "REQUIRED_AXES",
    "SETTINGS_DEFAULTS",
    "TOP_KEYS",
    "Cell",
    "FrozenDict",
    "Grid",
    "GridError",
    "ModelInfo",
    "canonical_json",
    "cell_hash",
    "cli_validate",
    "freeze",
    "load_grid",
    "model_catalog",
    "privatization_hash",
    "validate_text",
]
