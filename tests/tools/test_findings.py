"""docs/findings.md: its generated block is what `python -m bench.tools.findings` computes from the
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
    assert committed == render(), "regenerate it: python -m bench.tools.findings (docs/findings.md)"


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
    # one pair: no interval, and not called "ns" either (news_outlets has one seed)
    assert fmt_delta(paired({0: {"x": 0.5}}, {0: {"x": 0.4}}, lambda m: m["x"])) \
        == "+0.100 (one seed)"
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


def _rewrite_cell(params, seed, n_w, train_embeddings=True, dataset="rt", mech="laplace",
                  ref=None):
    rw = {"name": "autoencoder", "params": {"train_embeddings": True} if train_embeddings else {}}
    spec = {"dataset": {"name": dataset}, "mechanism": {"name": mech, "params": params},
            "sensitivity": {"name": "none"}, "mapping": {"name": "none"}, "rewriter": rw,
            "epsilon": 1.0, "seed": seed}
    rewrite = {"n_w": n_w, "rouge1": n_w, "bleu": n_w, "bertscore": n_w, "loss": 1 - n_w}
    metrics = {"utility": {"macro_f1": 0.5}, "rewrite": rewrite}
    if ref is not None:
        metrics["measures"] = {"reference_utility": {"macro_f1": ref}}
    return {"spec": spec, "metrics": metrics}


def test_ablation_variants_read_from_specs_and_paired_effects():
    from bench.tools.findings.ablation import ablation_section, departures, groups, variant

    code = {"C": 0.005, "clip": False, "noise_shared": "batch", "batch_sentences": 1024}
    assert departures("trlaplace_code", {"name": "trlaplace",
                                         "params": {**code, "code_dimension": True}},
                      {"params": {"train_embeddings": True}}) == {"D1", "D2", "D3", "D4", "D5"}
    assert variant("laplace", frozenset({"D1", "D2", "D3", "D4"})) == "code"
    assert variant("trlaplace", frozenset({"D1", "D2", "D3", "D4"})) == "-D5"
    assert variant("laplace", frozenset({"D1", "D3"})) is None      # two removed: no row
    no_d1 = {"C": 0.005, "clip": False}
    no_d2 = {"C": 1.0, "noise_shared": "batch", "batch_sentences": 1024}
    grids = {
        "trlaplace_code": [_rewrite_cell(code, s, 0.7) for s in (0, 1)]
        + [_rewrite_cell(no_d1, s, 0.1 + 0.01 * s) for s in (0, 1)]
        + [_rewrite_cell(no_d2, s, 0.05) for s in (0, 1)]
        + [_rewrite_cell(code, s, 0.69, train_embeddings=False) for s in (0, 1)],
        "trlaplace_code_public": [_rewrite_cell(code, s, 0.6) for s in (0, 1)],
        "trlaplace_rewrite": [_rewrite_cell({"C": 1.0}, s, 0.04, False) for s in (0, 1)]
        + [_rewrite_cell({"C": 1.0}, s, 0.9, False, dataset="yelp") for s in (0, 1)],
    }
    g = groups(grids)
    assert sorted(v for _, v, _ in g) == ["-D1", "-D2", "-D3", "-D4", "code", "dp"]
    assert [m.rewrite.n_w for m in g[("laplace", "dp", 1.0)].values()] == [0.04, 0.04]
    text = "\n".join(ablation_section(grids))
    effect = {line[2:].split(" (")[0]: line for line in text.splitlines()
              if line.startswith("| D") or line.startswith("| all")}
    # N_w: removing D2 loses 0.65 in both seeds; removing D1 loses 0.6 and 0.59
    assert "| 2 | +0.000 [+0.000, +0.000] (ns) | -0.650 [-0.650, -0.650] |" in effect["D2"]
    assert "-0.595 [" in effect["D1"] and "(ns)" not in effect["D1"].split(" | ")[3]
    assert "-0.660 [-0.660, -0.660]" in effect["all"]
    assert ablation_section({"trlaplace_rewrite": grids["trlaplace_rewrite"]}) == []
    assert "reference classifier" not in text       # no cell has it: no empty column


def test_ablation_and_rewrite_tables_carry_the_reference_classifier_once_cells_have_it():
    from bench.tools.findings.ablation import ablation_section
    from bench.tools.findings.trlaplace import trlaplace_rewrite_section

    code = {"C": 0.005, "clip": False, "noise_shared": "batch", "batch_sentences": 1024}
    no_d2 = {"C": 1.0, "noise_shared": "batch", "batch_sentences": 1024}
    grids = {
        "trlaplace_code": [_rewrite_cell(code, s, 0.7, ref=0.8 + 0.01 * s) for s in (0, 1)]
        + [_rewrite_cell(no_d2, s, 0.05, ref=0.5) for s in (0, 1)],
        "trlaplace_rewrite": [_rewrite_cell({"C": 1.0}, s, 0.04, False, ref=0.52)
                              for s in (0, 1)],
    }
    text = "\n".join(ablation_section(grids))
    assert "| utility | reference classifier | N_w |" in text
    assert "(so far in `trlaplace_code`, `trlaplace_rewrite`'s cells; – elsewhere)" in text
    d2 = next(line for line in text.splitlines() if line.startswith("| D2"))
    # reference classifier: 0.5 - 0.80 and 0.5 - 0.81, then N_w -0.65 in both seeds
    assert "| -0.305 [" in d2 and "| -0.650 [-0.650, -0.650] |" in d2
    rows = [line for line in text.splitlines() if "the code's setting" in line]
    assert rows and "| 0.805 ± " in rows[0]
    rw = "\n".join(trlaplace_rewrite_section(grids["trlaplace_rewrite"]))
    assert "| ε | mechanism | utility | reference classifier | loss |" in rw
    assert "| 0.500 ± 0.000 | 0.520 ± 0.000 | 0.960 ± 0.000 |" in rw
    assert "the two ends" not in rw                  # no known answers in these cells
    # without the measure, the rewrite table keeps its former columns
    plain = [_rewrite_cell({"C": 1.0}, s, 0.04, False) for s in (0, 1)]
    assert "reference classifier" not in "\n".join(trlaplace_rewrite_section(plain))


def test_rewrite_section_shows_the_known_answers_beside_the_baseline():
    from bench.tools.findings.trlaplace import trlaplace_rewrite_section

    def text_cell(mech, seed, f1, ref):
        spec = {"dataset": {"name": "rt"}, "mechanism": {"name": mech, "params": {}},
                "sensitivity": {"name": "none"}, "mapping": {"name": "none"},
                "epsilon": 1.0, "seed": seed}
        return {"spec": spec, "metrics": {"utility": {"macro_f1": f1},
                                          "measures": {"reference_utility": {"macro_f1": ref}}}}

    cells = ([_rewrite_cell({"C": 1.0}, s, 0.04, False, ref=0.52) for s in (0, 1)]
             + [text_cell("none", s, 0.65, 0.76) for s in (0, 1)]
             + [text_cell("identity", s, 0.66, 0.76) for s in (0, 1)]
             + [text_cell("no_information", s, 0.33, 0.5) for s in (0, 1)])
    rw = "\n".join(trlaplace_rewrite_section(cells))
    ends = next(line for line in rw.splitlines() if "the two ends" in line)
    assert "baseline (ε = ∞) 0.650 ± 0.000, 0.760 ± 0.000" in ends
    assert "identity 0.660 ± 0.000, 0.760 ± 0.000" in ends
    assert "no_information 0.330 ± 0.000, 0.500 ± 0.000" in ends
    assert "| identity" not in rw and "| no_information" not in rw   # not rewriter rows


def test_dimension_rows_put_a_claim_of_both_grids_side_by_side(monkeypatch):
    from bench.tools.findings.dimension import dimension_rows, dimension_section
    from bench.tools.findings.stats import load

    monkeypatch.chdir(ROOT)
    tem = load("tem")
    assert dimension_rows({"tem": tem}, {}) == [] and dimension_section({"tem": tem}, {}, {}) == []
    rows = dimension_rows({"tem": tem}, {"tem_100d": tem})   # the same cells on both sides
    assert len(rows) == len({c["spec"]["epsilon"] for c in tem
                             if c["spec"]["mechanism"]["name"] == "tem"})
    for row in rows:
        label, a, b = row.strip("| ").split(" | ")
        assert a == b and "[" in a, row                          # a paired interval, both sides
    only_100 = dimension_rows({}, {"tem_100d": tem})
    assert all(" | – | " in row for row in only_100)        # no 50-d cells: a dash
    # a 50-d grid on other data (another dataset configuration) is not put beside its 100-d
    # repetition: a dash, and the section says why
    moved = [{**c, "spec": {**c["spec"], "dataset": {**c["spec"]["dataset"],
                                                     "config": {"subsample": 600}}}}
             for c in tem]
    other = dimension_rows({"tem": moved}, {"tem_100d": tem})
    assert other and all(" | – | " in row for row in other)
    text = "\n".join(dimension_section({"tem": moved}, {"tem_100d": tem}, {}))
    assert "`tem_100d` ran on other data than its 50-d grid" in text
    assert "ran on other data" not in "\n".join(
        dimension_section({"tem": tem}, {"tem_100d": tem}, {}))


def test_thesis_dimension_rows_compare_the_same_approaches_and_say_where_tg_is_undefined(
        monkeypatch):
    """The thesis pair counts chance cells over the approaches both grids ran, and a truncated
    Gumbel budget the 50-d grid does not have (Alg. 1's b undefined there) says so."""
    from bench.tools.findings.dimension import dimension_rows
    from bench.tools.findings.stats import load

    monkeypatch.chdir(ROOT)
    ref = load("thesis_reference")
    rows = dimension_rows({"thesis_reference": ref}, {"thesis_100d": ref})
    assert rows and all(a == b for _, a, b in (r.strip("| ").split(" | ") for r in rows))
    chance = [r for r in rows if "at chance in every seed" in r]
    assert chance and all(" of 5 |" in r for r in chance)   # the five approaches of both grids
    tg = [r for r in rows if "truncated Gumbel" in r]
    assert tg and all("[" not in r and " / " in r and "±" in r for r in tg)

    def no_tg(cells):
        return [c for c in cells if c["spec"]["mechanism"]["name"] != "truncated_gumbel"]
    three = [c for c in ref if c["spec"]["sensitivity"]["name"] in ("none", "jl")]
    rows = dimension_rows({"thesis_reference": no_tg(ref)}, {"thesis_100d": three})
    assert all(" of 2 |" in r for r in rows if "at chance" in r)  # counted over none, jl
    assert all("| not defined | " in r for r in rows if "truncated Gumbel" in r)
    assert any("truncated Gumbel" in r for r in rows)


def _lm_cell(mech, eps, seed, util, adv, cs, lm=None, unigram=None):
    spec = {"mechanism": {"name": mech, "params": {}}, "sensitivity": {"name": "none"},
            "mapping": {"name": "nearest" if mech == "mvl" else "none"},
            "epsilon": "inf" if mech == "none" else eps, "seed": seed}
    measures = {"reference_utility": {"macro_f1": util},
                "similarity_minilm": {"cosine": cs, "retained": cs},
                "perplexity_smollm2": {"ratio": 1 / max(cs, 0.01)}}
    if lm is not None:
        measures["reconstruction_lm"] = {
            "lm_top1": {"rate": lm}, "map_top1": {"rate": unigram},
            "top1": {"rate": max(lm, unigram)}, "chance_top1": 0.05,
            "lm_lambda": [0.25, 0.5]}
    metrics = {"utility": {"macro_f1": util, "chance_threshold": 0.55},
               "privacy": {"speaker": {"adversary_macro_f1": adv, "chance_threshold": 0.27}},
               "measures": measures}
    return {"spec": spec, "metrics": metrics}


def test_lm_section_pairs_dp_prompt_with_the_word_level_cells_at_the_same_attack_strength():
    from bench.tools.findings.lm import lm_section

    assert lm_section([]) == []
    cells = []
    for s in range(3):
        d = 0.01 * s
        cells += [_lm_cell("none", None, s, 0.62 + d, 0.48 + d, 1.0),
                  _lm_cell("dp_prompt", 62, s, 0.58 + d, 0.30 + d, 0.20 + d),
                  _lm_cell("tem", 3, s, 0.55 + d, 0.31 + d, 0.10 + d, lm=0.30 + d,
                           unigram=0.20 + d),
                  _lm_cell("mvl", 25, s, 0.61 + d, 0.45 + d, 0.80 + d, lm=0.70,
                           unigram=0.72 + d)]
    text = "\n".join(lm_section(cells))
    assert "| dp_prompt, ε = 62 | 0.590 ± 0.025 |" in text
    assert "| tem, ε = 3 |" in text and "| none" not in text            # no baseline row
    tem = next(line for line in text.splitlines() if line.startswith("| tem, ε = 3 |"))
    assert tem.endswith("| 0.210 ± 0.025 | 0.310 ± 0.025 | 0.050 ± 0.000 |")  # uni, LM, chance
    # tem's attack (0.32 ± 0.025) overlaps DP-Prompt's (0.31 ± 0.025), mvl's (0.46) does not:
    # paired differences exactly +0.03 utility and +0.10 CS in every seed
    matched = next(line for line in text.splitlines() if line.startswith("- **dp_prompt"))
    assert "tem, ε = 3" in matched and "mvl" not in matched
    assert "utility +0.030 [+0.030, +0.030], CS +0.100 [+0.100, +0.100]" in matched
    # LM prior vs unigram: above in tem's 3 cells, below in mvl's 3 (+0.1 / −0.02 − spread)
    assert "at least the unigram attacker's in 3 of 6 cells, the headline (the strongest " \
           "guess) in 6 of 6" in text
    assert "  - tem, ε = 3: +0.100 [+0.100, +0.100] (λ" in text
    assert "  - mvl + nearest, ε = 25: -0.030 [-0.055, -0.005] (λ" in text
