"""bench.run.worker: a cell's thread limit reaches every library the cell loads, so a cell gives
the same bits in a fresh worker process as in a process that loaded its libraries before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.results.compare import comparable, differences
from bench.run.runner import run_grid
from tests.run.helpers import BOW_MIA_GRID

PROBE = """
import json
from bench.run.worker import cell_threads
with cell_threads():
    # what a cell loads on its way: scikit-learn's models (its OpenMP runtime), SciPy's solvers
    # (SciPy's own OpenBLAS)
    import scipy.optimize, scipy.special, sklearn.linear_model, sklearn.neural_network
    from threadpoolctl import threadpool_info
    print(json.dumps([(d["prefix"], d["num_threads"]) for d in threadpool_info()]))
"""


def test_the_cell_thread_limit_reaches_libraries_a_cell_loads_itself():
    """In a fresh process (nothing loaded yet, as in a new worker) every BLAS and OpenMP pool is
    at one thread inside :func:`cell_threads`, also the pools of libraries first loaded inside
    it. Without loading them first, SciPy's OpenBLAS and scikit-learn's OpenMP kept the
    machine's core count (2 on the CI machine)."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, check=True, timeout=300)
    pools = json.loads(out.stdout.strip().splitlines()[-1])
    assert {p for p, _ in pools} >= {"libscipy_openblas", "libgomp"}, pools
    assert all(n == 1 for _, n in pools), pools




def test_a_baseline_computed_first_in_a_fresh_worker_equals_the_in_process_one(tmp_path):
    """The baseline is the first cell of a fresh loky worker under ``jobs=2``: its membership
    attack's target (a memorising logistic regression) gave losses that differed in the last
    bits from the in-process run's (0.00042998227161022924 vs ...2053) while SciPy's and
    scikit-learn's thread pools escaped the limit. Every comparable number now agrees."""
    path = tmp_path / "g.yaml"
    path.write_text(BOW_MIA_GRID.format(name="fresh", extra=""))
    serial, parallel = tmp_path / "serial", tmp_path / "parallel"
    run_grid(path, results=serial, jobs=1, mlflow=False)
    run_grid(path, results=parallel, jobs=2, mlflow=False)
    cells = sorted(p.name for p in (serial / "cells").iterdir() if p.is_dir())
    assert len(cells) == 2
    for h in cells:
        a = json.loads((serial / "cells" / h / "metrics.json").read_text())
        b = json.loads((parallel / "cells" / h / "metrics.json").read_text())
        assert differences(comparable(a), comparable(b)) == [], a["cell"]
    base = next(json.loads((serial / "cells" / h / "metrics.json").read_text()) for h in cells
                if "mech=none" in json.loads((serial / "cells" / h / "metrics.json")
                                             .read_text())["cell"])
    assert base["mia"]["mia_attacks"]["loss_threshold"]["member_loss"] > 0
