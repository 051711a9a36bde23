"""The metric component (bench.metrics.base): every registered metric carries its label,
decimals, direction and kind; rewrite metrics carry their computation and are what
``rewrite_scores`` computes; an unknown metric has no direction (an error, never a guess)."""

from __future__ import annotations

import pytest

from bench.metrics import (
    KINDS,
    METRICS,
    Metric,
    higher_is_better,
    metric,
    rewrite_metrics,
    rewrite_scores,
)
from bench.metrics.base import as_values
from bench.registry import UnknownNameError


@pytest.mark.parametrize("name", METRICS.names(), ids=str)
def test_every_metric_is_a_complete_component(name):
    m = metric(name)
    assert isinstance(m, Metric) and m.name == name and m.label and m.description
    assert m.kind in (*KINDS, "") and m.digits >= 0  # "": a plugin that does not say
    if METRICS.origin(name) == "bench":
        assert m.kind in KINDS
    assert (m.compute is not None) == (m.kind == "rewrite")


def test_the_builtin_rewrite_metrics_their_order_labels_and_digits():
    """The order, labels and decimals the report and the cell hash relied on before the
    metrics became components."""
    got = [(m.name, m.label, m.digits, m.identity, m.version) for m in rewrite_metrics()]
    assert got == [("n_w", "N_w", 3, 1.0, "1"), ("rouge1", "ROUGE-1", 3, 1.0, "1"),
                   ("bleu", "BLEU", 2, 100.0, "1"), ("bertscore", "BERTScore", 3, 1.0, "2")]
    from bench.metrics import REWRITE_METRICS, metric_versions

    assert REWRITE_METRICS == ("n_w", "rouge1", "bleu", "bertscore")
    assert metric_versions(REWRITE_METRICS) == "bertscore=2,bleu=1,n_w=1,rouge1=1"


def test_rewrite_scores_is_each_metric_own_computation():
    orig, priv = [["a", "b", "c", "d"], "the cat"], [["a", "b", "x", "d"], "the hat"]
    s = rewrite_scores(orig, priv, with_bertscore=False)
    expected: dict[str, float] = {}
    for m in rewrite_metrics():
        if m.name != "bertscore":
            expected |= as_values(m, m.compute(orig, priv))
    assert list(s) == ["n_w", "rouge1", "rouge2", "rougeL", "bleu"] == list(expected)
    assert s == expected  # the same values, bit for bit


def test_higher_is_better_reads_the_component_and_refuses_unknown_names():
    assert higher_is_better("bleu") and higher_is_better("tradeoff")
    assert not higher_is_better("loss") and not higher_is_better("mia_auc")
    with pytest.raises(UnknownNameError, match="unknown metric 'bleuu'; did you mean 'bleu'"):
        higher_is_better("bleuu")
    with pytest.raises(UnknownNameError):  # no silent True
        higher_is_better("test_loss")


def test_metric_checks_its_fields():
    with pytest.raises(ValueError, match="needs a compute"):
        Metric("x", True, "d", kind="rewrite")
    with pytest.raises(ValueError, match="digits must be an int"):
        Metric("x", True, "d", digits=-1)
    with pytest.raises(ValueError, match="non-empty name"):
        Metric("", True, "d")
    assert Metric("x", True, "d").label == "x"  # the label defaults to the name


def test_a_metric_registered_under_another_name_is_refused():
    with pytest.raises(ValueError, match="declares name 'bleu' but is registered as 'alias_of"):
        METRICS.register("alias_of_bleu")(metric("bleu"))  # at registration
    METRICS._entries["alias_of_bleu"] = metric("bleu")  # a plugin's entry point: at look-up
    try:
        with pytest.raises(TypeError, match="registered as a Metric named 'bleu'"):
            metric("alias_of_bleu")
    finally:
        METRICS._entries.pop("alias_of_bleu")


def test_a_rewrite_metric_giving_a_mapping_must_hold_its_own_key():
    m = Metric("x", True, "d", kind="rewrite", compute=lambda o, p: {"y": 1.0})
    with pytest.raises(ValueError, match="without its own key 'x'"):
        as_values(m, m.compute([], []))
    assert as_values(m, 0.5) == {"x": 0.5}


def test_two_rewrite_metrics_giving_one_key_is_an_error():
    clash = Metric("clash", True, "d", kind="rewrite", order=1,
                   compute=lambda o, p: {"clash": 0.0, "bleu": 1.0})
    METRICS.register("clash")(clash)
    try:
        with pytest.raises(ValueError, match=r"rewrite metric 'bleu' gives \['bleu'\]"):
            rewrite_scores(["a"], ["a"], with_bertscore=False)
    finally:
        METRICS._entries.pop("clash")
