"""One Guarantee.from_dict and one describe(): the record a cell stores reads back as the
guarantee that wrote it, and the report's symbolic form comes from the same method."""

import math

import pytest

from bench.guarantee import Guarantee
from bench.report.guarantees import describe_guarantee


@pytest.mark.parametrize("g", [
    Guarantee("pure", 1.0),
    Guarantee("approx", 2.0, multiplier=2.535, delta=1e-6),
    Guarantee("metric", 10.0, multiplier=3.0, metric="euclidean", proven=False, reason="r"),
    Guarantee("approx", 1.0, delta=0.0, log10_delta=-1601.2),
    Guarantee("none", math.inf),
    Guarantee("pure", 1.0, void=True, void_reason="clip: false"),
])
def test_a_stored_record_reads_back_as_the_guarantee(g):
    assert Guarantee.from_dict(g.to_dict()) == g
    assert describe_guarantee(g.to_dict()) == g.describe(symbolic=True)


def test_symbolic_forms():
    sym = [Guarantee("pure", 1.0), Guarantee("approx", 1.0, multiplier=2.535, delta=1e-6),
           Guarantee("metric", 1.0, metric="euclidean"), Guarantee("metric", 1.0, delta=0.01),
           Guarantee("approx", 1.0, log10_delta=-1601.25), Guarantee("none", 0.0)]
    assert [g.describe(symbolic=True) for g in sym] == [
        "ε-DP", "(2.535·ε, δ=1e-06)-DP", "ε·d metric DP [euclidean]",
        "(ε·d, δ=0.01) metric DP", "(ε, δ=1e-1601.2)-DP", "none"]


def test_json_strings_and_missing_fields():
    g = Guarantee.from_dict({"kind": "metric", "epsilon": "inf"})
    assert math.isinf(g.epsilon) and g.multiplier == 1.0 and g.delta == 0.0 and g.proven
    with pytest.raises(ValueError, match="guarantee kind"):
        Guarantee.from_dict({"kind": "forged"})
    assert describe_guarantee({"kind": "forged"}) == describe_guarantee(None)


def test_void_record_reads_no_guarantee_and_keeps_old_records_unchanged():
    g = Guarantee("pure", 1.0)
    assert set(g.to_dict()) == {"kind", "epsilon", "multiplier", "delta", "metric", "proven",
                                "reason", "log10_delta"}  # no void keys unless void
    v = g.voided("a").voided("b")
    assert v.to_dict()["void"] is True and v.void_reason == "a; b"
    assert v.describe(symbolic=True) == "no DP guarantee"
    assert v.describe() == "no DP guarantee: a; b (without that: ε-DP)"
    # a cell whose rewriter voided it (bench.run.stages) reads back as void
    rec = dict(g.to_dict(), void=True, void_reason="trained on the evaluated data")
    assert describe_guarantee(rec) == "no DP guarantee"
