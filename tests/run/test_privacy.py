"""The runner's privacy measurement: every adversary per task, the strongest as the headline,
and no silent zeros -- a task whose baseline attack is at chance is flagged, not reported as
private."""

import json

import numpy as np
import pytest

from bench.datasets.base import DATASETS, Corpus, DatasetCard, Task, register_dataset
from bench.grid import GridError, load_grid
from bench.run.runner import run_grid

FILLER = ("the of and to in a is that for it as was with be by on not he this are or his "
          "from at which but have an they you were her she there been one all we their has "
          "would when if so no will more can who about up out them some time could into two "
          "good through down how should each even state those day too work year world").split()

def _load_planted() -> Corpus:
    """300 filler documents: topic = a planted topic word, `secret` = a planted 'china',
    `noise` = random labels written nowhere."""
    rng = np.random.default_rng(0)
    n = 300
    topic = rng.integers(0, 2, n)
    secret = (rng.random(n) < 0.4).astype(np.int64)
    noise = rng.integers(0, 2, n)
    texts = []
    for t, s in zip(topic, secret):
        doc = list(rng.choice(FILLER, size=40))
        doc[3] = ("money", "music")[t]
        if s:
            doc[int(rng.integers(5, 40))] = "china"
        texts.append(" ".join(doc))
    return Corpus(texts, [Task("topic", topic, "binary", "utility", ("a", "b")),
                          Task("secret", secret, "binary", "privacy", ("no", "yes")),
                          Task("noise", noise, "binary", "privacy", ("no", "yes"))])


@pytest.fixture(scope="module", autouse=True)
def planted_mock():
    """Register the mock dataset for this module only (the registry is process-wide: a
    dataset left registered would show up in other tests' dataset listings)."""
    register_dataset("planted_mock", card=DatasetCard("planted_mock", "Planted mock", "tests",
                                                      "-", ()), max_tokens=None)(_load_planted)
    yield
    del DATASETS._entries["planted_mock"]


GRID = """
name: planted
axes:
  dataset: [planted_mock]
  model: [bow]
  mechanism: [tem]
  epsilon: [0.01, 50]
  seed: [0]
settings:
  vocab_size: 2000
  adversaries: [lexical, model]
"""


def _metrics(results):
    return {m["cell"]: m for m in (json.loads(f.read_text())
                                   for f in results.glob("cells/*/metrics.json"))}


def test_headline_validity_and_deltas(tmp_path):
    grid = tmp_path / "planted.yaml"
    grid.write_text(GRID)
    results = tmp_path / "results"
    summary = run_grid(grid, results=results, mlflow=False)
    assert summary.count("done") == 3
    # one warning line for the task nobody can read, none for the readable one
    assert len(summary.warnings) == 1 and "noise" in summary.warnings[0]
    assert "WARNING no valid privacy measurement for planted_mock / noise" in summary.text()

    m = _metrics(results)
    base = next(v for k, v in m.items() if "mech=none" in k)
    hi = next(v for k, v in m.items() if "eps=50" in k)
    lo = next(v for k, v in m.items() if "eps=0.01" in k)
    for cell in (base, hi, lo):
        for task in ("secret", "noise"):
            p = cell["privacy"][task]
            assert set(p["by_adversary"]) == {"lexical", "bow"}
            best = max(a["adversary_macro_f1"] for a in p["by_adversary"].values())
            assert p["adversary_macro_f1"] == best and p["privacy"] == pytest.approx(1 - best)
            assert p["by_adversary"][p["adversary"]]["adversary_macro_f1"] == best
            assert p["by_adversary"]["lexical"]["version"] == "1"
    # readable attribute: valid; baseline attack far above chance; privacy rises as eps falls
    assert base["privacy"]["secret"]["privacy_valid"] is True
    assert base["privacy"]["secret"]["adversary_macro_f1"] > 0.9
    assert lo["privacy"]["secret"]["privacy"] > hi["privacy"]["secret"]["privacy"]
    d = lo["vs_baseline"]["by_privacy_task"]["secret"]
    assert d["privacy_valid"] is True and d["delta_privacy"] == pytest.approx(
        lo["privacy"]["secret"]["privacy"] - base["privacy"]["secret"]["privacy"])
    # unreadable attribute: numbers kept, flagged invalid, no delta, no trade-off
    for cell in (base, hi, lo):
        p = cell["privacy"]["noise"]
        assert p["privacy_valid"] is False and "chance" in p["privacy_invalid_reason"]
        assert 0 <= p["privacy"] <= 1
    d = hi["vs_baseline"]["by_privacy_task"]["noise"]
    assert d["delta_privacy"] is None and d["tradeoff"] is None and d["privacy_valid"] is False
    assert d["delta_utility"] == pytest.approx(hi["vs_baseline"]["delta_utility"])


def test_adversary_versions_are_in_the_cell_identity(tmp_path):
    grid = tmp_path / "planted.yaml"
    grid.write_text(GRID)
    cells = load_grid(grid).cells
    assert all(c.spec()["adversaries"] == "lexical=1,bow=2" for c in cells)
    grid.write_text(GRID.replace("[lexical, model]", "[lexical]"))
    assert {c.hash for c in cells}.isdisjoint({c.hash for c in load_grid(grid).cells})


def test_grid_adversaries_setting_errors(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID.replace("[lexical, model]", "[lexcal]"))
    with pytest.raises(GridError, match="settings.adversaries: unknown adversary 'lexcal'; "
                                        "did you mean 'lexical'"):
        load_grid(grid)
    grid.write_text(GRID.replace("[lexical, model]", "lexical"))
    with pytest.raises(GridError, match="non-empty list of adversary names"):
        load_grid(grid)


def test_explicit_text_adversary_on_vector_output_is_an_error(tmp_path):
    """informed/lexical cannot read privatized vectors: asked for explicitly, that is a
    configuration error (one line, exit 2); the default set simply leaves them out."""
    from bench.cli import main

    grid = tmp_path / "g.yaml"
    grid.write_text(GRID.replace("mechanism: [tem]", "mechanism: [mvl]\n  mapping: [none]")
                    .replace("model: [bow]", "model: [lstm]")
                    .replace("[lexical, model]", "[model, informed]"))
    with pytest.raises(GridError, match="settings.adversaries: adversary 'informed' reads text; "
                                        "this cell's privatized output is vectors"):
        load_grid(grid)
    assert main(["run", str(grid), "--results", str(tmp_path / "r"), "--no-mlflow"]) == 2
    assert not (tmp_path / "r").exists()
    grid.write_text(grid.read_text().replace("  adversaries: [model, informed]\n", ""))
    g = load_grid(grid)
    assert not g.skipped
    vec = [c for c in g.cells if not c.is_baseline]
    assert all(c.spec()["adversaries"].startswith("lstm=") for c in vec)


MIA_GRID = """
name: mia
axes:
  dataset: [{name: rt, subsample: 1200}]
  model: [bow]
  mechanism: [tem]
  epsilon: [0.5]
  seed: [0]
settings:
  vocab_size: 5000
  mia: true
"""


def test_mia_headline_interval_and_validity(tmp_path):
    """Both attacks run, the stronger is the headline with a bootstrap interval, and every
    cell says whether MIA measures anything (judged on the unprivatized model)."""
    grid = tmp_path / "mia.yaml"
    grid.write_text(MIA_GRID)
    results = tmp_path / "results"
    assert run_grid(grid, results=results, mlflow=False).count("done") == 2
    m = _metrics(results)
    base = next(v for k, v in m.items() if "mech=none" in k)["mia"]
    priv = next(v for k, v in m.items() if "mech=tem" in k)["mia"]
    for mia in (base, priv):
        assert set(mia["mia_attacks"]) == {"shadow", "loss_threshold"}
        best = max(a["auc"] for a in mia["mia_attacks"].values())
        assert mia["mia_auc"] == best == mia["mia_attacks"][mia["mia_attack"]]["auc"]
        lo, hi = mia["mia_auc_ci"]
        assert lo <= mia["mia_auc"] <= hi
        assert mia["target_params"]  # the memorising target (settings.mia_target)
    # the memorising bow target on its members: the attack on the unprivatized model works
    assert base["mia_valid"] is True and base["mia_auc_ci"][0] > 0.5
    assert priv["mia_valid"] is True and priv["mia_invalid_reason"] is None


def test_deltas_compare_the_same_adversaries():
    """A vector-output cell runs no text adversary: its Δprivacy and validity are judged
    against the baseline's same-model adversary, not against a baseline won by lexical."""
    from bench.attacks.adversary import headline
    from bench.run.validity import add_deltas, mark_privacy_validity

    def m(f1, thr=0.1):
        return {"privacy": 1 - f1, "adversary_macro_f1": f1, "chance_threshold": thr,
                "chance_level": f1 <= thr}

    base = {"utility": {"macro_f1": 0.9},
            "privacy": {"t": headline({"lexical": m(0.95), "lstm": m(0.4)}),
                        "u": headline({"lexical": m(0.95), "lstm": m(0.05)})}}
    mark_privacy_validity(base, base)
    assert base["privacy"]["u"]["privacy_valid"] is True  # lexical reads it
    cell = {"utility": {"macro_f1": 0.8},
            "privacy": {"t": headline({"lstm": m(0.3)}), "u": headline({"lstm": m(0.05)})}}
    add_deltas(cell, base)
    d = cell["vs_baseline"]["by_privacy_task"]
    assert d["t"]["delta_privacy"] == pytest.approx(0.1)  # 0.7 - 0.6 (lstm vs lstm), not 0.65
    assert cell["privacy"]["u"]["privacy_valid"] is False  # lstm is at chance on the baseline
    assert d["u"]["delta_privacy"] is None and "lstm" in d["u"]["reason"]
    # a baseline that ran none of the cell's adversaries: no measurement, no delta
    cell = {"utility": {"macro_f1": 0.8}, "privacy": {"t": headline({"bow": m(0.3)})}}
    add_deltas(cell, base)
    assert cell["privacy"]["t"]["privacy_valid"] is None
    assert cell["vs_baseline"]["by_privacy_task"]["t"]["delta_privacy"] is None


def test_each_adversary_gets_what_it_declares(tmp_path, monkeypatch):
    """The runner special-cases no adversary by name: a new adversary that declares
    ``needs = {"privatizer"}`` gets the cell's attack privatizer (None on the baseline), one
    built once per cell and shared; one that declares nothing gets nothing extra."""
    from bench.attacks.adversary import ADVERSARIES
    from bench.attacks.lexical import LexicalAdversary

    seen: list = []

    class Needy(LexicalAdversary):
        name = "toy_needy"
        needs = frozenset({"privatizer", "attribute_words"})

        def __init__(self, *, privatizer=None, attribute_words=None, **kw):
            super().__init__(**kw)
            seen.append((privatizer, attribute_words))

    monkeypatch.setitem(ADVERSARIES._entries, "toy_needy", Needy)
    grid = tmp_path / "planted.yaml"
    grid.write_text(GRID.replace("[lexical, model]", "[toy_needy, lexical]")
                    .replace("[0.01, 50]", "[50]"))
    summary = run_grid(grid, results=tmp_path / "results", mlflow=False)
    assert summary.count("done") == 2
    assert len(seen) == 4  # 2 cells x 2 privacy tasks
    base = [p for p, _ in seen if p is None]
    priv = [p for p, _ in seen if p is not None]
    assert len(base) == 2 and len(priv) == 2 and priv[0] is priv[1]  # built once per cell
    assert priv[0].mechanism.name == "tem" and priv[0].mechanism.epsilon == 50
    assert all(words is None for _, words in seen)  # binary tasks: no label words
