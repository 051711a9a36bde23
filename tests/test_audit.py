"""The auditor: catches deliberately broken variants, passes every registered mechanism."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from bench.audit import (
    audit_key,
    audit_status,
    cli_audit,
    cp_lower,
    cp_upper,
    read_audit_status,
    run_audit,
    write_audit_status,
)
from bench.embeddings import Embedding, load_embedding
from bench.mechanisms import MECHANISMS
from bench.privatize import Privatizer

FAST = dict(pairs=1, draws=6000, joint_calls=300)

# per-mechanism configuration that each mechanism accepts at |W| = 1,000
CONFIG = {
    "gaussian": (1.0, {}, "none"),
    "truncated_gumbel": (300.0, {}, "none"),
    "privemb": (1.0, {}, "jl"),
}


@pytest.fixture(scope="module")
def glove():
    return load_embedding("glove-6b-50d", 1000)


@pytest.fixture(scope="module")
def line():
    """50 words on a line (1-D): the multivariate Laplace is the Laplace, tight on half-lines."""
    x = np.sort(np.random.default_rng(0).uniform(0, 10, size=(50, 1)), axis=0)
    return Embedding("line", [f"w{i}" for i in range(50)], x)


def test_clopper_pearson_bounds():
    assert cp_lower(0, 100, 0.025) == 0 and cp_upper(100, 100, 0.025) == 1
    lo, hi = stats.binomtest(30, 100).proportion_ci(0.95, method="exact")
    assert float(cp_lower(30, 100, 0.025)) == pytest.approx(lo)
    assert float(cp_upper(30, 100, 0.025)) == pytest.approx(hi)
    assert float(cp_upper(0, 1000, 0.05)) == pytest.approx(1 - 0.05 ** (1 / 1000))


WORD_LEVEL = [n for n in MECHANISMS.names() if MECHANISMS.get(n).kind != "document"]
"""The mechanisms the audit can check word by word (``dp_prompt`` writes documents)."""


def test_a_document_level_mechanism_is_refused_with_the_reason():
    from bench.errors import InputError

    with pytest.raises(InputError, match="writes whole documents.*test_dp_prompt.py"):
        run_audit("dp_prompt", 10.0)


@pytest.mark.parametrize("name", WORD_LEVEL, ids=str)
def test_every_registered_mechanism_passes(glove, name):
    eps, params, sens = CONFIG.get(name, (1.0, {}, "none"))
    report = run_audit(name, eps, params=params, sensitivity=sens, embedding=glove, seed=1,
                       **FAST)
    assert report.rows and report.n_tests > 0
    assert report.passed, report.table()
    checks = {r.check for r in report.rows}
    if MECHANISMS.get(name).guarantee_kind == "none":  # identity: it claims nothing to audit
        assert checks == {"oov"}
        return
    assert {"words", "joint", "oov"} <= checks
    if MECHANISMS.get(name).kind == "additive":
        assert "vectors" in checks


def _broken(p, kind):
    orig = p.mechanism.noise
    if kind == "half":
        p.mechanism.noise = lambda n: 0.5 * orig(n)
    elif kind == "shared":
        p.mechanism.noise = lambda n: np.repeat(orig(1), n, axis=0)
    return p


def test_noise_scaled_by_half_is_caught(line):
    ok = Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=line, seed=0)
    good = run_audit("mvl", 1.0, privatizer=ok, pairs=2, draws=20_000, joint_calls=300)
    assert good.passed, good.table()
    bad = _broken(Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=line, seed=0), "half")
    report = run_audit("mvl", 1.0, privatizer=bad, pairs=2, draws=20_000, joint_calls=300)
    assert not report.passed
    assert {r.check for r in report.violations} >= {"vectors", "words"}
    assert report.max_excess() > 0.5
    assert "VIOLATION" in report.table()


def test_shared_noise_across_tokens_is_caught(glove):
    p = _broken(Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=glove, seed=0),
                "shared")
    report = run_audit("mvl", 1.0, privatizer=p, checks=("joint",), **FAST)
    (row,) = report.violations
    assert row.check == "joint" and row.lower_bound > row.claimed
    # the single-token checks cannot see it: each token alone has the right distribution
    p2 = _broken(Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=glove, seed=0),
                 "shared")
    assert run_audit("mvl", 1.0, privatizer=p2, checks=("vectors",), **FAST).rows


CODE = {"C": 0.005}  # the public code's calibration constant (method.py)
DEPARTURES = [({"clip": False}, "vectors"), ({"noise_shared": "batch"}, "joint")]


@pytest.mark.parametrize("name", ["laplace", "gaussian", "trlaplace"])
@pytest.mark.parametrize("departure,check", DEPARTURES, ids=["clip", "noise_shared"])
def test_public_code_departures_are_caught(glove, name, departure, check):
    """Huang et al.'s public code: noise calibrated to C = 0.005 on unclipped vectors (caught
    by the single-token check), one noise vector per batch of sentences (caught by the
    two-token check); the same mechanism with clipping and noise per token passes."""
    good = run_audit(name, 1.0, params=CODE, embedding=glove, seed=1, checks=(check,), **FAST)
    assert good.passed and good.rows, good.table()
    params = {**CODE, **departure, "allow_no_guarantee": True}
    report = run_audit(name, 1.0, params=params, embedding=glove, seed=1, checks=(check,),
                       **FAST)
    assert report.violations and {r.check for r in report.violations} == {check}
    assert report.max_excess() > 0.5, report.table()
    assert report.guarantee.startswith("no DP guarantee")


def test_oov_pass_through_is_caught(glove):
    for mech, eps in (("tem", 2.0), ("mvl", 1.0)):
        report = run_audit(mech, eps, embedding=glove, oov="keep", checks=("oov",), **FAST)
        (row,) = report.violations
        assert row.check == "oov" and "zzqx" in row.evidence
        fine = run_audit(mech, eps, embedding=glove, oov="unk", checks=("oov",), **FAST)
        assert fine.passed and fine.rows[0].lower_bound == -math.inf


def test_custext_pairs_stay_in_scope(glove):
    report = run_audit("custext", 1.0, embedding=glove, checks=("words",), **FAST)
    m = Privatizer.build(mechanism="custext", epsilon=1.0, mapping="none", embedding=glove,
                         seed=1).mechanism
    w2i = glove.word_to_id
    for r in report.rows:
        a, b = w2i[r.pair[0]], w2i[r.pair[1]]
        assert m.same_scope(np.array([a]), np.array([b]))[0] and r.claimed == 1.0
    assert any("scope" in n for n in report.notes)


def test_status_file_round_trip_and_cli(tmp_path, glove):
    report = run_audit("tem", 2.0, embedding=glove, **FAST)
    path = write_audit_status(report, tmp_path)
    assert path.name == audit_key("tem", 2.0, {"beta": 0.001}, "none") + ".json"
    rec = json.loads(path.read_text())
    assert rec["format"] == "bench-audit/1" and rec["status"] == "PASS"
    assert rec["pairs_tested"] == 4 and rec["n_tests"] == report.n_tests
    assert rec == audit_status(report) | {"created": rec["created"]}
    assert read_audit_status(tmp_path)[report.key]["status"] == "PASS"
    text, code = cli_audit("tem", 2.0, vocab_size=1000, pairs=1, draws=2000,
                           results_dir=tmp_path)
    assert code == 0 and "PASS" in text and "status written" in text
    text, code = cli_audit("mvl", 1.0, vocab_size=1000, pairs=1, draws=2000, oov="keep",
                           results_dir=None)
    assert code == 1 and "VIOLATION" in text
    with pytest.raises(ValueError, match="confidence"):
        run_audit("tem", 1.0, confidence=1.5)
