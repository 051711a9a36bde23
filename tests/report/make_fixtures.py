"""Write the hand-made result folders under ``tests/fixtures/results/`` (run once; committed).

``basic/`` — the metrics schema from before several adversaries (one adversary per attribute,
no ``by_adversary``, no ``privacy_valid``); the report must keep reading it. The numbers are
chosen so that means and stds over the two seeds are easy to check by hand in the expected
tables of ``test_tables.py``. The set holds: a baseline per seed, mvl (nearest) and tem (none)
at ε 1 and 10 over seeds 0 and 1 (one tem cell with its utility model at chance, the tem ε=10
adversary at chance), one mvl cell with an estimated guarantee (unit_norm), one mvl cell from an
older suite version with no baseline, and one failed cell (``error.json`` only).

``adversaries/`` — the current schema (:func:`adversary_cells`): dataset ``trustpilot``, model
lstm, adversaries lexical, informed and lstm on two attributes, a baseline and mvl at ε 1 and 10
over seeds 0 and 1. ``age`` is valid (the strongest adversary, lexical, beats chance on the
baseline; the lstm adversary does not); ``gender`` is not (every adversary is at chance on the
baseline). The mvl cells carry the headline MIA with its CI (valid at ε = 1, not at ε = 10).
Every macro-F1 carries its bootstrap interval as suite 0.3.0 writes it (``macro_f1_ci95``,
``privacy_ci95``, ``adversary_macro_f1_ci95``): :data:`CI_HALF` either side of the value, so the
one-seed rules are easy to check by hand (seed 0: mvl ε=1 differs from the baseline in utility
and age privacy, disjoint intervals; mvl ε=10 does not, overlapping intervals).

Example:
    $ .venv/bin/python tests/report/make_fixtures.py
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "basic"
SETTINGS = {"baseline": True, "embedding": "glove-6b-50d", "embedding_path": None,
            "metrics": ["utility", "privacy", "runtime", "guarantee"], "mia": False,
            "model_defaults": {}, "oov": "unk", "rewrite_max_docs": 20, "rewrite_metrics": True,
            "vocab_size": 5000}
DATA_HASH = "a1" * 32
METRIC_DP = {"delta": 0.0, "kind": "metric", "log10_delta": None,
             "metric": "euclidean (original embedding space)", "multiplier": 1.0,
             "proven": True, "reason": ""}


def _spec(mech: str, eps: float | str, seed: int, mapping: str, sens: str = "none",
          suite: str = "0.1.0", mech_params: dict | None = None) -> dict:
    base = mech == "none"
    name = (f"bbc:model=lstm,mech={mech},sens={sens},map={mapping},"
            f"eps={eps if isinstance(eps, str) else f'{eps:g}'},seed={seed}")
    return {
        "dataset": {"name": "bbc", "config": {}, "version": "1"},
        "model": {"name": "lstm", "params": {}, "version": "1"},
        "mechanism": {"name": mech, "params": mech_params or {},
                      "version": None if base else "1"},
        "sensitivity": {"name": sens, "params": {} if base else {"fit_on": "vocab"},
                        "version": None if base else 1},
        "mapping": {"name": mapping, "params": {}, "version": None if base else "1"},
        "epsilon": eps, "seed": seed, "settings": SETTINGS, "name": name,
        "dataset_hash": DATA_HASH, "suite_version": suite,
        "hash": hashlib.sha256(f"{name}|{suite}".encode()).hexdigest()[:16],
    }


def _metrics(spec: dict, u: float, p: float, *, du: float | None = None,
             dp: float | None = None, u_chance: bool = False, a_chance: bool = False,
             rewrite: tuple | None = None, guarantee: dict | None = None,
             privatizer: dict | None = None, mia: float | None = None) -> dict:
    m = {"cell": spec["name"], "dataset_hash": DATA_HASH, "suite_version": spec["suite_version"],
         "utility": {"task": "topic", "macro_f1": u, "accuracy": u, "chance_level": u_chance,
                     "chance_threshold": 0.25, "n": 40},
         "privacy": {"entities": {"privacy": p, "adversary_macro_f1": round(1 - p, 6),
                                  "chance_level": a_chance, "chance_threshold": 0.15,
                                  "n": 40}},
         "runtime": {"total_seconds": 1.0}, "privatization": {"n_tokens": 1000}}
    if du is not None:
        m["vs_baseline"] = {"delta_utility": du, "by_privacy_task": {"entities": {
            "delta_utility": du, "delta_privacy": dp, "tradeoff": round(du + dp, 6)}}}
    if spec["mechanism"]["name"] != "none":
        m["guarantee"] = guarantee or METRIC_DP
        m["n_w"] = rewrite[0] if rewrite else None
        m["privatization"]["guarantee"] = m["guarantee"]
    if privatizer is not None:
        m["privatization"]["privatizer"] = privatizer
    if rewrite:
        m["rewrite"] = dict(zip(("n_w", "rouge1", "bleu", "bertscore"), rewrite),
                            n_docs=20)
    if mia is not None:
        m["mia"] = {"mia_auc": mia, "mia_accuracy": 0.5}
    return m


def _privatizer(mech: str, eps: float, sens: str = "none", bound: str | float = "inf",
                proven: bool = True, mech_extra: dict | None = None) -> dict:
    return {"embedding": "glove-6b-50d", "vocab_size": 5000,
            "mechanism": {"name": mech, "epsilon": eps, "version": "1", **(mech_extra or {})},
            "mapping": {"name": "nearest"},
            "sensitivity": {"name": sens, "bound": bound, "delta": 0.0, "proven": proven,
                            "out_dim": 50, "params": {"fit_on": "vocab"}}}


def cells() -> list[tuple[dict, dict]]:
    """(spec, metrics) of every finished fixture cell."""
    out = []
    base = {0: (0.9, 0.5), 1: (0.8, 0.4)}
    for seed, (u, p) in base.items():
        s = _spec("none", "inf", seed, "none")
        out.append((s, _metrics(s, u, p)))
    # mvl, nearest: (seed -> u, p, du, dp, rewrite)
    mvl = {1.0: {0: (0.7, 0.8, -0.2, 0.3, (0.3, 0.5, 20.0, 0.7)),
                 1: (0.6, 0.6, -0.2, 0.2, (0.4, 0.6, 30.0, 0.8))},
           10.0: {0: (0.85, 0.45, -0.05, -0.05, (0.8, 0.85, 60.0, 0.9)),
                  1: (0.8, 0.4, 0.0, 0.0, (0.9, 0.95, 70.0, 0.95))}}
    for eps, by_seed in mvl.items():
        for seed, (u, p, du, dp, rw) in by_seed.items():
            s = _spec("mvl", eps, seed, "nearest")
            out.append((s, _metrics(s, u, p, du=du, dp=dp, rewrite=rw,
                                    privatizer=_privatizer("mvl", eps,
                                                           mech_extra={"calibrate": False}))))
    tem = {1.0: {0: (0.2, 0.9, -0.7, 0.4, (0.5, 0.6, 25.0, 0.75), True, False),
                 1: (0.3, 0.8, -0.5, 0.4, (0.5, 0.7, 35.0, 0.75), False, False)},
           10.0: {0: (0.9, 0.55, 0.0, 0.05, (0.85, 0.9, 65.0, 0.9), False, True),
                  1: (0.8, 0.45, 0.0, 0.05, (0.95, 0.9, 75.0, 0.95), False, True)}}
    for eps, by_seed in tem.items():
        for seed, (u, p, du, dp, rw, uc, ac) in by_seed.items():
            s = _spec("tem", eps, seed, "none", mech_params={"beta": 0.001})
            out.append((s, _metrics(s, u, p, du=du, dp=dp, rewrite=rw, u_chance=uc,
                                    a_chance=ac, mia=0.5 + 0.01 * eps)))
    s = _spec("mvl", 10.0, 0, "nearest", sens="unit_norm")
    est = dict(METRIC_DP, multiplier=2.5349, proven=False,
               reason="minimum distance estimated on the vocabulary")
    out.append((s, _metrics(s, 0.88, 0.52, du=-0.02, dp=0.02, guarantee=est,
                            privatizer=_privatizer("mvl", 10.0, "unit_norm", 2.5349, False,
                                                   {"calibrate": False}))))
    s = _spec("mvl", 10.0, 0, "nearest", suite="0.0.9")
    out.append((s, _metrics(s, 0.5, 0.5)))
    return out


def failed() -> tuple[str, dict]:
    """(folder name, error.json) of the failed fixture cell."""
    name = "bbc:model=lstm,mech=truncated_gumbel,sens=none,map=none,eps=1,seed=0"
    return (hashlib.sha256(name.encode()).hexdigest()[:16],
            {"name": name, "error": "ValueError: truncated_gumbel is undefined below eps ~ 76",
             "traceback": "Traceback (most recent call last):\n  ...\nValueError: ...\n"})


def write(root: Path = ROOT) -> Path:
    """(Re)write the fixture folder; returns it."""
    if root.exists():
        shutil.rmtree(root)
    for spec, metrics in cells():
        folder = root / "cells" / spec["hash"]
        folder.mkdir(parents=True)
        for name, obj in (("spec.json", spec), ("metrics.json", metrics)):
            (folder / name).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
    h, err = failed()
    (root / "cells" / h).mkdir(parents=True)
    (root / "cells" / h / "error.json").write_text(json.dumps(err, indent=1, sort_keys=True)
                                                   + "\n")
    return root


# --------------------------------------------------------------------------------------------
# adversaries/: the metrics schema with several adversaries and the validity check
# --------------------------------------------------------------------------------------------

ADV_ROOT = ROOT.parent / "adversaries"
ADV_SETTINGS = dict(SETTINGS, adversaries=["lexical", "informed", "model"], mia=True,
                    rewrite_metrics=False)
THRESHOLD = {"age": 0.35, "gender": 0.55}
"""Chance threshold (macro-F1) of each attribute's test split."""
CI_HALF = 0.05
"""Half-width of every fixture bootstrap interval (``*_ci95``)."""
ADVERSARIES = ("lexical", "informed", "lstm")
"""Run order (ties: the first wins, as in ``bench.attacks.adversary.strongest``)."""

# (mechanism, eps, seed) -> (utility, {task: (lexical, informed, lstm) macro-F1}, mia)
ADV_CELLS: dict[tuple[str, float | str, int], tuple] = {
    ("none", "inf", 0): (0.8, {"age": (0.6, 0.55, 0.3), "gender": (0.5, 0.48, 0.52)},
                         (0.6, 0.55, 0.65, True)),
    ("none", "inf", 1): (0.7, {"age": (0.5, 0.45, 0.34), "gender": (0.54, 0.4, 0.45)},
                         (0.6, 0.55, 0.65, True)),
    ("mvl", 1.0, 0): (0.6, {"age": (0.4, 0.45, 0.25), "gender": (0.45, 0.5, 0.4)},
                      (0.56, 0.51, 0.61, True)),
    ("mvl", 1.0, 1): (0.5, {"age": (0.4, 0.3, 0.2), "gender": (0.5, 0.35, 0.42)},
                      (0.54, 0.49, 0.59, True)),
    ("mvl", 10.0, 0): (0.8, {"age": (0.55, 0.5, 0.3), "gender": (0.5, 0.49, 0.51)},
                       (0.52, 0.45, 0.59, False)),
    ("mvl", 10.0, 1): (0.75, {"age": (0.45, 0.4, 0.32), "gender": (0.52, 0.44, 0.47)},
                       (0.5, 0.43, 0.57, False)),
}


def _adv_spec(mech: str, eps: float | str, seed: int) -> dict:
    s = _spec(mech, eps, seed, "none" if mech == "none" else "nearest")
    s["dataset"] = {"name": "trustpilot", "config": {}, "version": "1"}
    s["name"] = s["name"].replace("bbc:", "trustpilot:")
    s["settings"] = ADV_SETTINGS
    s["hash"] = hashlib.sha256(f"{s['name']}|{s['suite_version']}".encode()).hexdigest()[:16]
    return s


def _ci(x: float) -> list[float]:
    """The fixture's bootstrap interval around ``x``: ``[x − CI_HALF, x + CI_HALF]`` in [0, 1]."""
    return [round(max(x - CI_HALF, 0.0), 6), round(min(x + CI_HALF, 1.0), 6)]


def _by_adversary(task: str, f1s: tuple[float, ...]) -> dict:
    thr = THRESHOLD[task]
    return {name: {"privacy": round(1 - f1, 6), "privacy_ci95": _ci(round(1 - f1, 6)),
                   "adversary_macro_f1": f1, "adversary_macro_f1_ci95": _ci(f1),
                   "adversary_accuracy": f1, "adversary_per_class_f1": [f1, f1],
                   "n": 40, "chance_threshold": thr, "chance_level": f1 <= thr,
                   "fit_seconds": 0.5, "predict_seconds": 0.1, "version": "1"}
            for name, f1 in zip(ADVERSARIES, f1s)}


def _headline(by: dict) -> dict:
    name = max(by, key=lambda n: by[n]["adversary_macro_f1"])
    out = {k: v for k, v in by[name].items() if k not in ("fit_seconds", "predict_seconds")}
    return out | {"adversary": name, "by_adversary": by, "seconds": 1.8,
                  "adversaries_left_out": []}


def _validity(base: dict) -> tuple[bool, str | None]:
    from bench.attacks.adversary import privacy_validity  # the runner's rule and wording

    return privacy_validity(base)


def adversary_cells() -> list[tuple[dict, dict]]:
    """(spec, metrics) of every cell of ``adversaries/``, metrics as the runner writes them."""
    out, base = [], {}
    for (mech, eps, seed), (u, tasks, (auc, lo, hi, mia_ok)) in ADV_CELLS.items():
        spec = _adv_spec(mech, eps, seed)
        priv = {t: _headline(_by_adversary(t, f1s)) for t, f1s in tasks.items()}
        m = {"cell": spec["name"], "dataset_hash": DATA_HASH,
             "suite_version": spec["suite_version"],
             "utility": {"task": "sentiment", "macro_f1": u, "macro_f1_ci95": _ci(u),
                         "accuracy": u,
                         "chance_level": False, "chance_threshold": 0.25, "n": 40},
             "privacy": priv, "runtime": {"total_seconds": 1.0},
             "privatization": {"n_tokens": 1000},
             "mia": {"mia_auc": auc, "mia_auc_ci": [lo, hi], "mia_accuracy": 0.5,
                     "mia_attack": "loss_threshold",
                     "mia_attacks": {"loss_threshold": {"auc": auc, "auc_ci": [lo, hi]},
                                     "shadow": {"auc": 0.5, "auc_ci": [0.44, 0.56]}},
                     "mia_valid": mia_ok,
                     "mia_invalid_reason": None if mia_ok else (
                         "the strongest attack's AUC CI includes 0.5 on the unprivatized "
                         "baseline: no valid MIA")}}
        if mech == "none":
            base[seed] = m
            for p in priv.values():
                p["privacy_valid"], p["privacy_invalid_reason"] = _validity(p)
        else:
            m["guarantee"] = m["privatization"]["guarantee"] = METRIC_DP
            m["n_w"] = 0.5
            b = base[seed]
            du = round(u - b["utility"]["macro_f1"], 6)
            by_task = {}
            for t, p in priv.items():
                ok, why = _validity(b["privacy"][t])
                p["privacy_valid"], p["privacy_invalid_reason"] = ok, why
                if ok:
                    dp = round(p["privacy"] - b["privacy"][t]["privacy"], 6)
                    by_task[t] = {"delta_utility": du, "delta_privacy": dp,
                                  "tradeoff": round(du + dp, 6), "privacy_valid": True,
                                  "reason": None}
                else:
                    by_task[t] = {"delta_utility": du, "delta_privacy": None, "tradeoff": None,
                                  "privacy_valid": False, "reason": why}
            m["vs_baseline"] = {"delta_utility": du, "by_privacy_task": by_task}
        out.append((spec, m))
    return out


def write_adversaries(root: Path = ADV_ROOT) -> Path:
    """(Re)write the ``adversaries/`` fixture folder; returns it."""
    if root.exists():
        shutil.rmtree(root)
    for spec, metrics in adversary_cells():
        folder = root / "cells" / spec["hash"]
        folder.mkdir(parents=True)
        for name, obj in (("spec.json", spec), ("metrics.json", metrics)):
            (folder / name).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
    return root


if __name__ == "__main__":
    write()
    write_adversaries()
