"""docs/findings.md: its generated block is what `python -m bench.findings` computes from the
committed reference cells (no number in the findings can drift from the cells), and the
statistics it uses are right on synthetic seeds."""

from pathlib import Path

import pytest

from bench.tools.findings import BEGIN, END, fmt, fmt_delta, paired, render, t_interval

ROOT = Path(__file__).resolve().parents[2]


def test_findings_block_is_current(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    committed = text[text.index(BEGIN): text.index(END) + len(END)] + "\n"
    assert committed == render(), "regenerate it: python -m bench.findings (docs/findings.md)"


def test_t_interval_and_paired_differences():
    mean, lo, hi, n = t_interval([0.7, 0.6, 0.8])
    # t_{0.975, 2} = 4.302653; s = 0.1; half-width 4.302653 * 0.1 / sqrt(3)
    assert (mean, n) == (pytest.approx(0.7), 3)
    assert hi - mean == pytest.approx(4.302653 * 0.1 / 3 ** 0.5, rel=1e-6)
    assert t_interval([0.5]) == (0.5, 0.5, 0.5, 1) and t_interval([])[3] == 0
    a = {0: {"x": 0.9}, 1: {"x": 0.8}, 2: {"x": 0.85}}
    b = {0: {"x": 0.5}, 1: {"x": 0.41}, 2: {"x": 0.44}, 3: {"x": 0.0}}  # seed 3 unpaired
    st = paired(a, b, lambda m: m["x"])
    assert st[3] == 3 and st[0] == pytest.approx(0.4) and st[1] > 0
    assert "(ns)" not in fmt_delta(st)
    noise = paired({0: {"x": 0.5}, 1: {"x": 0.6}}, {0: {"x": 0.55}, 1: {"x": 0.52}},
                   lambda m: m["x"])
    assert fmt_delta(noise).endswith("(ns)")
    assert fmt((0.5, 0.4, 0.6, 3)) == "0.500 ± 0.100" and fmt((0.5, 0.5, 0.5, 1)) == "0.500"


def _measured_cell(mech, eps, seed, recon, unchanged, link, n_w):
    spec = {"mechanism": {"name": mech, "params": {}}, "sensitivity": {"name": "none"},
            "mapping": {"name": "nearest" if mech == "mvl" else "none"},
            "epsilon": "inf" if mech == "none" else eps, "seed": seed}
    metrics = {"n_w": n_w, "mia": {"mia_auc": 0.6}, "measures": {
        "reconstruction": {"map_top1": {"rate": recon}, "unchanged": {"rate": unchanged},
                           "chance_top1": 0.04},
        "linkage": {"top1": link, "chance_top1": 0.01},
        "mia_low_fpr": {"tpr_at_fpr_0.01": {"tpr": 0.05}, "tpr_at_fpr_0.001": {"tpr": 0.0}}}}
    return {"spec": spec, "metrics": metrics}


def test_measures_section_rows_from_planted_cells():
    from bench.tools.findings.measures import measures_section

    assert measures_section({}) == []
    assert measures_section({"tem": [{"spec": {}, "metrics": {"n_w": 1.0}}]}) == []
    cells = [_measured_cell("mvl", 10, s, 0.5 + 0.01 * s, 0.4 + 0.01 * s, 0.9, 0.4)
             for s in range(3)] + [_measured_cell("none", None, s, 1, 1, 1, 1) for s in range(3)]
    text = "\n".join(measures_section({"tem": cells}))
    row = next(line for line in text.splitlines() if line.startswith("| mvl + nearest, ε = 10 "))
    # MAP 0.51 ± spread, MAP − unchanged exactly +0.1 in every seed: significant, zero width
    assert "| 3 | 0.400 ± 0.000 | 0.510 ± 0.025 | " in row
    assert "+0.100 [+0.100, +0.100]" in row and "(ns)" not in row
    assert "| 0.900 ± 0.000 | – | 0.010 ± 0.000 | – |" in row     # no MiniLM, no S_w
    assert "baseline (ε = ∞) | 3 | 0.600 ± 0.000 | 0.050 ± 0.000 | 0.000 ± 0.000 | – | – |" \
        in text
    assert "| none" not in text                                      # baselines: no text row
