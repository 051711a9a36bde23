"""One Guarantee.from_dict and one describe(): the record a cell stores reads back as the
guarantee that wrote it, and the report's symbolic form comes from the same method."""

import math
import re

import numpy as np
import pytest

from bench.analysis.guarantees import describe_guarantee
from bench.guarantee import Guarantee, delta_text


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
        "(ε·d, δ=0.01) metric DP", "(ε, δ=5.62e-1602)-DP", "none"]


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


# a δ written with a fractional exponent, as describe() did before: "1e-30.1"
FRACTIONAL_EXPONENT = re.compile(r"e[-+]?\d+\.\d")


@pytest.mark.parametrize("d", [50, 100])
def test_gaussian_delta_reads_as_a_number_in_every_form(d):
    """Gaussian's default δ = 4^-d reads as 7.89e-31 (d = 50), never 1e-30.1, wherever a
    guarantee is written: describe(), the report's symbolic form, the stored record's text."""
    from bench.mechanisms import MECHANISMS

    space = np.random.default_rng(0).normal(size=(40, d))
    g = MECHANISMS.create("gaussian", epsilon=1.0).fit(space).guarantee()
    want = f"{4.0 ** -d:.3g}"
    texts = [g.describe(), g.describe(symbolic=True), describe_guarantee(g.to_dict())]
    assert texts[0] == f"(ε, {want})-DP"
    assert texts[1] == texts[2] == f"(ε, δ={want})-DP"
    assert not any(FRACTIONAL_EXPONENT.search(t) for t in texts), texts
    assert "1e-30.1" not in texts[0] and (d != 50 or want == "7.89e-31")


@pytest.mark.parametrize(("delta", "log10", "text"), [
    (1e-6, -6.0, "1e-06"),
    (0.05, math.log10(0.05), "0.05"),
    (4.0 ** -50, 50 * -math.log10(4.0), "7.89e-31"),
    (4.0 ** -401, 401 * -math.log10(4.0), "3.75e-242"),
    (0.0, 1601 * -math.log10(4.0), "1.26e-964"),   # 4^-1601 is 0.0 as a float
    (0.0, -963.0001, "1e-963"),                      # the mantissa rounds up to 10
    (0.0, None, "0"),
])
def test_delta_text_is_one_notation_at_every_size(delta, log10, text):
    assert delta_text(delta, log10) == text
    assert not FRACTIONAL_EXPONENT.search(delta_text(delta, log10))


def test_a_metric_guarantee_shows_a_delta_too_small_for_a_float():
    g = Guarantee("metric", 1.0, delta=0.0, log10_delta=-400.5, metric="euclidean")
    assert g.describe() == "(ε, 3.16e-401)·d metric DP (euclidean)"
    assert g.describe(symbolic=True) == "(ε·d, δ=3.16e-401) metric DP [euclidean]"


def test_a_rerun_compares_the_guarantee_record_not_its_text():
    """Cells stored before δ was written as a number keep their old text; a rerun of such a
    cell compares the guarantee record, not the text."""
    from bench.results.compare import comparable, differences

    rec = Guarantee("approx", 1.0, delta=4.0 ** -50, log10_delta=-30.10299956639812).to_dict()
    stored = {"privatization": {"guarantee": rec, "guarantee_text": "(ε, 1e-30.1)-DP"}}
    rerun = {"privatization": {"guarantee": rec, "guarantee_text": "(ε, 7.89e-31)-DP"}}
    assert differences(comparable(stored), comparable(rerun)) == []
    changed = {"privatization": {"guarantee": dict(rec, delta=1e-5),
                                 "guarantee_text": "(ε, 1e-05)-DP"}}
    assert differences(comparable(stored), comparable(changed)) == [
        "/privatization/guarantee/delta: committed 7.888609052210118e-31, rerun 1e-05"]
