"""Plugins end to end: the example plugin (examples/plugin, distribution ``bench-rrn``) is
pip-installed into a temporary ``--target`` folder and used through the ``bench`` command with
``PYTHONPATH`` pointing there -- listed with its origin, validated and run in a one-cell grid,
audited, used by ``bench privatize``, and its own tests pass; a broken plugin and a plugin taking
a built-in's name (fake ``*.dist-info`` folders) warn once and leave ``bench ls`` working.

The registry-level rules (lazy discovery, order, collisions) are unit-tested in
tests/test_registry.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.cli import main

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "plugin"
ORIGIN = "[plugin: bench-rrn 0.1.0]"


def bench(args: list[str], path: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    """``bench ARGS`` in a subprocess with ``path`` on PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(path), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=path.parent)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """examples/plugin pip-installed (no deps, no build isolation) into a --target folder; built
    from a copy so no build/ or *.egg-info lands in the source tree."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = tmp / "src"
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                               "__pycache__"))
    target = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--disable-pip-version-check", "--no-index",
                    "--target", str(target), str(src)], check=True, capture_output=True,
                   timeout=300)
    assert (target / "bench_rrn" / "__init__.py").is_file()
    return target


def builtin_ls(capsys, what: str) -> str:
    assert main(["ls", what]) == 0  # this process has no plugin
    return capsys.readouterr().out


def test_ls_shows_the_plugin_with_its_origin(installed, capsys):
    r = bench(["ls", "mechanisms"], installed)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    (row,) = [line for line in lines if line.startswith("rrn ")]
    assert row.split()[1:4] == ["selection", "words", "eps-DP"] and row.endswith(ORIGIN)
    # built-in rows unchanged: the listing without the plugin row is the plain listing
    assert "\n".join(x for x in lines if x != row) + "\n" == builtin_ls(capsys, "mechanisms")


GRID = """
    name: rrnplugin
    axes:
      dataset: [{name: bbc, subsample: 40, split: [0.6, 0.2, 0.2]}]
      model: [bow]
      mechanism: [{name: rrn, k: 3}]   # the plugin mechanism, with a parameter
      epsilon: [2]
      seed: [0]
    settings:
      vocab_size: 2000
      adversaries: [lexical]
      baseline: false
"""


def test_validate_and_run_a_grid_with_the_plugin_mechanism(installed, tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text(textwrap.dedent(GRID), encoding="utf-8")
    r = bench(["validate", str(grid)], installed)
    assert r.returncode == 0, r.stderr
    assert "1 cells (0 baseline), 0 skipped" in r.stdout
    results = tmp_path / "results"
    r = bench(["run", str(grid), "--results", str(results), "--no-mlflow"], installed)
    assert r.returncode == 0, r.stderr
    (cell,) = (results / "cells").iterdir()
    spec = json.loads((cell / "spec.json").read_text())
    assert spec["mechanism"] == {"name": "rrn", "params": {"k": 3}, "version": "2"}
    metrics = json.loads((cell / "metrics.json").read_text())
    assert metrics["guarantee"]["kind"] == "pure" and metrics["guarantee"]["proven"] is False
    # the cell says which package, at which version, computed it (built-ins are not listed)
    assert metrics["plugins"] == {"mechanism rrn": "bench-rrn 0.1.0"}
    # without the plugin the same grid is refused with the usual message
    assert main(["validate", str(grid)]) == 2


def test_audit_runs_on_the_plugin_mechanism(installed, tmp_path):
    r = bench(["audit", "-m", "rrn", "-e", "2", "-p", "k=1", "--vocab-size", "2000", "--pairs",
               "1", "--draws", "2000", "--results-dir", str(tmp_path)], installed)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout and "estimated, not proven" in r.stdout
    (status,) = tmp_path.glob("rrn__*.json")
    record = json.loads(status.read_text())
    assert record["status"] == "PASS" and record["pairs_tested"] >= 1


def test_privatize_with_the_plugin_mechanism(installed):
    r = subprocess.run([sys.executable, "-m", "bench.cli", "privatize", "-m", "rrn", "-e", "3",
                        "-p", "k=2", "--vocab-size", "2000"], input="the market fell\n",
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(installed)))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.split()) == 3 and "guarantee: ε-DP [estimated" in r.stderr


def test_the_plugin_own_tests_and_the_registry_wide_tests_pass(installed):
    """The plugin's own tests (examples/plugin/tests), and the suite's registry-wide mechanism
    test, which picks up every registered mechanism -- the plugin's included."""
    contract = "tests/mechanisms/test_contract.py::test_registered_with_metadata_and_citation"
    r = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-v", "-p",
                        "no:cacheprovider", str(PLUGIN / "tests"), contract],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(installed)), cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:]
    assert "test_registered_with_metadata_and_citation[rrn] PASSED" in r.stdout
    assert "test_rrn.py::test_sampled_distribution_matches_the_exact_one PASSED" in r.stdout
    # its exact channel, which the informed adversary inverts instead of sampling
    assert ("test_rrn.py::test_exact_channel_is_the_distribution_and_informed_uses_it PASSED"
            in r.stdout)


# ----------------------------------------------------------------- broken and colliding plugins

def fake_plugin(root: Path, dist: str, entries: dict[str, str], modules: dict[str, str]) -> Path:
    """A fake installed distribution: ``<dist>-0.1.dist-info/{METADATA,entry_points.txt}``."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[bench.mechanisms]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    for mod, src in modules.items():
        (root / f"{mod}.py").write_text(src)
    return root


def test_broken_plugin_warns_once_and_ls_lists_everything_else(tmp_path, capsys):
    site = fake_plugin(tmp_path / "site", "bench-broken", {"broken": "bench_broken_mod:Mech"},
                       {"bench_broken_mod": "raise ImportError('no module named torch_xyz')\n"})
    r = bench(["ls", "mechanisms"], site)
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, r.stderr
    assert "plugin 'broken' from package bench-broken 0.1 cannot be loaded" in warnings[0]
    assert "ImportError: no module named torch_xyz" in warnings[0]
    plain = builtin_ls(capsys, "mechanisms")
    assert r.stdout == plain + ("not loaded: mechanism 'broken' [plugin: bench-broken 0.1]: "
                                "ImportError: no module named torch_xyz\n")
    # using it is an ordinary unknown-name error (exit 2) that says why
    r = bench(["privatize", "-m", "broken", "-e", "1", "--vocab-size", "2000"], site)
    assert r.returncode == 2
    assert "comes from plugin package bench-broken 0.1, which failed to load" in r.stderr


def test_plugin_taking_a_builtin_name_is_refused(tmp_path, capsys):
    site = fake_plugin(tmp_path / "site", "bench-evil", {"tem": "bench_evil_mod:Evil"},
                       {"bench_evil_mod": "raise RuntimeError('must never be imported')\n"})
    r = bench(["ls", "mechanisms"], site)
    assert r.returncode == 0, r.stderr
    assert r.stdout == builtin_ls(capsys, "mechanisms")  # the built-in tem, no plugin row
    (warning,) = r.stderr.splitlines()
    assert "mechanism plugin 'tem' from package bench-evil 0.1 is refused" in warning
    assert "a built-in mechanism" in warning
