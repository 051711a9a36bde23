"""Synthetic ``leaderboard.json`` data (schema version 1) for the page's tests and benchmark.

:func:`synthetic_leaderboard` builds a schema-valid leaderboard of any size, seeded and
deterministic, without running anything: several boards (dataset × utility task × private
attribute × suite version) with one unprivatized baseline per model, entries with 3–5 ε points
whose utility rises and privacy falls with ε, 1–3 cells per point with provenance from one or
two sources, and the awkward cases a reader has to handle: entries without a valid privacy
measurement (unscored, unranked), audit violations (ranked last), entries without an interval,
files and MLflow links that are null, and hostile strings (``<script>alert(1)</script>``,
quotes, ``&``, a ``javascript:`` link) in a few names. Scores are the hypervolume gain over
the baseline and ranks follow ``rank_i = 1 + #{j : lo_j > hi_i}`` as in ``docs/leaderboard.md``
(the interval is a cheap stand-in, not a bootstrap).

Example:
    >>> from bench.leaderboard.page import render_page
    >>> board = synthetic_leaderboard(1_000, seed=0)
    >>> len(board["entries"])
    1000
    >>> Path("leaderboard.html").write_text(render_page(board))
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from typing import Any

from bench.analysis.measures import MEASURE_LABELS
from bench.results.layout import METRICS, SPEC

HOSTILE_MECHANISM = "<script>alert(1)</script>"
"""A mechanism name that would run if the page inserted it as HTML."""

HOSTILE_MODEL = "lstm \"quoted\" & 'apos' <b>bold</b>"
"""A model name with quotes, an ampersand and a tag."""

HOSTILE_DATASET = "</script><img src=x onerror=alert(2)>&amp;"
"""A dataset name that closes the script element and adds an image with a handler."""

HOSTILE_RUN_BY = "<b onmouseover=alert(3)>mallory</b>"
"""A provenance ``run_by`` with an event handler."""

HOSTILE_HREF = "javascript:alert(4)"
"""A cell link that must never become a clickable ``href``."""

_DATASETS = [("bbc(subsample=600)", "topic", ["entities", "author"]),
             ("imdb", "sentiment", ["gender"]),
             ("yelp(stars)", "stars", ["gender", "location"]),
             ("trustpilot", "rating", ["gender", "age"]),
             ("sst2", "sentiment", ["entities"]),
             ("agnews", "topic", ["entities"])]
_VERSIONS = ["0.3.0", "0.2.1"]
_MODELS = ["lstm", "transformer", "bow"]
_MECHANISMS = [("mvl", "metric"), ("tem", "metric"), ("laplace", "metric"),
               ("gaussian", "approximate metric"), ("trlaplace", "metric"),
               ("truncated_gumbel", "pure"), ("vickrey", "metric")]
_SENSITIVITIES = ["none", "unit_norm", "clip(C=1)"]
_MAPPINGS = ["nearest", "vickrey", "none"]
_EPSILONS = [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
_ADVERSARIES = ["lexical", "lstm", "informed"]
_MACHINES = ["host-1", "host-2", "gpu-node-7"]
_PEOPLE = ["alice", "bob", None]
_GENERATED = "2026-11-23T15:04:05Z"
_SOURCES = [("s0", "folder", "/abs/results"),
            ("s1", "folder", "/home/bob/bench & co/results"),
            ("s2", "mlflow", "http://127.0.0.1:5000")]


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _ci(rng: random.Random, v: float) -> list[float]:
    h = rng.uniform(0.01, 0.06)
    return [round(max(0.0, v - h), 4), round(min(1.0, v + h), 4)]


def hypervolume(points: list[tuple[float, float]]) -> float:
    """Area of the union of ``[0, p] × [0, u]`` over the (privacy, utility) points."""
    area, best_u = 0.0, 0.0
    for p, u in sorted(points, key=lambda t: -t[0]):
        if u > best_u:
            area += p * (u - best_u)
            best_u = u
    return area


def _gain(points: list[tuple[float, float]], base: tuple[float, float]) -> float:
    return max(0.0, hypervolume(points + [base]) - hypervolume([base]))


def _boards(n_boards: int) -> list[tuple[str, str, str, str]]:
    """``n_boards`` distinct (dataset, task, attribute, version); later rounds vary subsamples."""
    base = [(ds, task, attr, v) for v in _VERSIONS for ds, task, attrs in _DATASETS
            for attr in attrs]
    out = []
    for k in itertools.count():
        for ds, task, attr, v in base:
            if len(out) == n_boards:
                return out
            out.append((ds if k == 0 else f"{ds.split('(')[0]}(subsample={100 * (k + 1)})",
                        task, attr, v))
    return out  # pragma: no cover


def _configs(rng: random.Random, n: int) -> list[tuple[str, str, str, str, str, str]]:
    """``n`` distinct (model, mechanism, guarantee, sensitivity, mapping, params) of one board."""
    combos = [(m, mech, g, s, mp) for m in _MODELS for mech, g in _MECHANISMS
              for s in _SENSITIVITIES for mp in _MAPPINGS]
    rng.shuffle(combos)
    out = []
    for k in itertools.count():
        for m, mech, g, s, mp in combos:
            if len(out) == n:
                return out
            out.append((m, mech, g, s, mp, "" if k == 0 else f"(beta={0.1 * k:g})"))
    return out  # pragma: no cover


def _signer(run_by: str | None) -> dict[str, Any] | None:
    """A verified signer derived from the claimed name (no draw of its own, so the boards
    stay what they were): a named key, bob's key unknown to the keyring, None unsigned."""
    if run_by is None:
        return None
    key = "ed25519:" + hashlib.sha256(run_by.encode()).hexdigest()
    return {"key": key, "name": None if run_by == "bob" else run_by}


def _cells(rng: random.Random, eps: float, hostile: bool) -> list[dict[str, Any]]:
    cells = []
    for seed in range(rng.randint(1, 3)):
        h = _hex(rng, 16)
        prov = []
        for src in rng.sample(["s0", "s1", "s2"], rng.choice([1, 1, 1, 2])):
            prov.append({"source": src, "suite_version": "0.3.0",
                         "commit": None if rng.random() < 0.1 else _hex(rng, 7),
                         "machine": rng.choice(_MACHINES),
                         "date": f"2026-11-{rng.randint(1, 22):02d}T{rng.randint(0, 23):02d}:"
                                 f"{rng.randint(0, 59):02d}:00Z",
                         "run_by": HOSTILE_RUN_BY if hostile else rng.choice(_PEOPLE)})
            prov[-1] |= {"sealed": True, "signer": _signer(prov[-1]["run_by"])}
        href = None if rng.random() < 0.1 else f"file:///abs/results/cells/{h}"
        mlflow = (f"http://127.0.0.1:5000/#/experiments/1/runs/{_hex(rng, 32)}"
                  if any(p["source"] == "s2" for p in prov) else None)
        if hostile and seed == 0:
            href = HOSTILE_HREF
        cells.append({"hash": h, "seed": seed, "href": href, "mlflow": mlflow,
                      "provenance": prov})
        hostile = False
    return cells


def _mia(idx: int, eps: float) -> dict[str, Any] | None:
    """A membership-inference AUC for every third entry (every ninth not valid); no random
    draw, so the other values stay those of the generator's stream."""
    if idx % 3:
        return None
    if idx % 9 == 0:
        return {"auc": None, "auc_ci": None, "attack": "loss_threshold", "valid": False}
    auc = round(0.5 + 0.3 * (1 - math.exp(-0.1 * eps)), 4)
    return {"auc": auc, "auc_ci": [round(auc - 0.04, 4), round(auc + 0.04, 4)],
            "attack": "loss_threshold", "valid": True}


def _measures(idx: int, eps: float) -> dict[str, float] | None:
    """Measures (``measure_labels`` keys) for every fourth entry; no random draw."""
    if idx % 4:
        return None
    top1 = round(1 - math.exp(-0.3 * eps), 4)
    return {"recon_top1": top1, "recon_chance": 0.07, "s_w": round(1 + 40 * math.exp(-eps), 4),
            "link_top1": round(top1 / 2, 4)}


def _entry(rng: random.Random, idx: int, board_id: str, board_key: tuple, cfg: tuple,
           base: dict[str, Any]) -> dict[str, Any]:
    model, mech, guarantee, sens, mapping, params = cfg
    if idx == 1:
        mech = HOSTILE_MECHANISM
    valid = base["privacy_valid"] and rng.random() > 0.04
    no_interval = rng.random() < 0.05
    u_b, p_b = base["utility"], base["privacy"]
    ru, rp = rng.uniform(0.1, 0.8), rng.uniform(0.05, 0.6)
    points = []
    for eps in sorted(rng.sample(_EPSILONS, rng.randint(3, 5))):
        u = min(1.0, max(0.0, u_b * (1 - math.exp(-ru * eps)) + rng.gauss(0, 0.02)))
        p = min(1.0, max(0.0, p_b + (1 - p_b) * math.exp(-rp * eps) + rng.gauss(0, 0.02)))
        points.append({"epsilon": eps, "utility": round(u, 4),
                       "utility_ci": None if no_interval else _ci(rng, u),
                       "privacy": round(p, 4) if valid else None,
                       "privacy_ci": _ci(rng, p) if valid and not no_interval else None,
                       "privacy_valid": valid, "adversary": rng.choice(_ADVERSARIES),
                       "n_w": round(1 - math.exp(-0.2 * eps), 4), "pareto": False,
                       "mia": _mia(idx, eps), "measures": _measures(idx, eps), "audit": None,
                       "cells": _cells(rng, eps, hostile=idx == 3)})
    audit = rng.choices(["PASS", "VIOLATION", "not audited"], [0.5, 0.06, 0.44])[0]
    for k, q in enumerate(points):  # a violation at the largest ε, the others passed
        q["audit"] = ("VIOLATION" if k == len(points) - 1 else "PASS") \
            if audit == "VIOLATION" else audit
    score = score_ci = None
    if valid:
        b = (p_b, u_b)
        score = round(_gain([(q["privacy"], q["utility"]) for q in points], b), 4)
        if not no_interval:
            lo = _gain([(q["privacy_ci"][0], q["utility_ci"][0]) for q in points], b)
            hi = _gain([(q["privacy_ci"][1], q["utility_ci"][1]) for q in points], b)
            score_ci = [round(min(lo, score), 4), round(max(hi, score), 4)]
    dataset = board_key[0]
    return {"id": f"e{idx}", "board": board_id, "dataset": dataset, "model": model,
            "mechanism": mech, "sensitivity": sens, "mapping": mapping,
            "config": f"{mech}{params} · sens={sens} · map={mapping}",
            "suite_version": board_key[3], "guarantee": guarantee, "audit": audit,
            "score": score, "score_ci": score_ci, "rank": None,
            "rank_flag": "invalid privacy" if not valid else "", "points": points,
            **_signed_by(points)}


def _signed_by(points: list[dict[str, Any]]) -> dict[str, Any]:
    used = [c["provenance"][0]["signer"] for q in points for c in q["cells"]]
    keys = {sg["key"]: sg for sg in used if sg}
    return {"signed_by": [keys[k] for k in sorted(keys)],
            "unsigned_cells": sum(sg is None for sg in used)}


def _rank(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Set rank and rank_flag (docs/leaderboard.md); returns the entries in rank order."""
    scored = [e for e in entries if e["score"] is not None]
    ok = [e for e in scored if e["audit"] != "VIOLATION"]
    bad = [e for e in scored if e["audit"] == "VIOLATION"]
    offset = 0
    for group in (ok, bad):
        iv = [tuple(e["score_ci"]) if e["score_ci"] else (e["score"], e["score"]) for e in group]
        for e, (_lo, hi) in zip(group, iv, strict=True):
            e["rank"] = offset + 1 + sum(1 for lo2, _h in iv if lo2 > hi)
            e["rank_flag"] = ("audit violation" if e["audit"] == "VIOLATION"
                              else "" if e["score_ci"] else "no interval")
        offset += len(group)
    return sorted(entries, key=lambda e: (e["rank"] is None, e["rank"] or 0, -(e["score"] or 0)))


def _pareto(entries: list[dict[str, Any]], baselines: list[dict[str, Any]]) -> None:
    """Mark the points not dominated by any point of the board (baselines included)."""
    pts = [(q["utility"], q["privacy"], q) for e in entries for q in e["points"]
           if q["privacy_valid"] and q["privacy"] is not None]
    pts += [(b["utility"], b["privacy"], None) for b in baselines if b["privacy_valid"]]
    higher = -math.inf  # best privacy among points of strictly higher utility
    for _u, group in itertools.groupby(sorted(pts, key=lambda t: -t[0]), key=lambda t: t[0]):
        group = list(group)
        top = max(p for _u2, p, _q in group)
        for _u2, p, q in group:
            if q is not None:
                q["pareto"] = not (higher >= p or top > p)
        higher = max(higher, top)


def synthetic_leaderboard(n_entries: int, seed: int = 0) -> dict[str, Any]:
    """A schema-valid ``leaderboard.json`` dict with ``n_entries`` entries.

    Args:
        n_entries: number of entries (≥ 0), spread over ``max(2, ceil(n / 60))`` boards.
        seed: seed of every random choice (same seed, same data).

    Returns:
        The parsed leaderboard (``docs/leaderboard.md``, schema version 1).
    """
    if isinstance(n_entries, bool) or not isinstance(n_entries, int) or n_entries < 0:
        raise ValueError(f"n_entries must be an int >= 0, got {n_entries!r}")
    rng = random.Random(seed)
    n_boards = max(2, math.ceil(n_entries / 60))
    keys = _boards(n_boards)
    sizes = [n_entries // n_boards + (1 if b < n_entries % n_boards else 0)
             for b in range(n_boards)]
    boards, entries, idx = [], [], 0
    for b, (key, size) in enumerate(zip(keys, sizes, strict=True)):
        bid = f"b{b}"
        ds = HOSTILE_DATASET if b == 1 else key[0]
        key = (ds, *key[1:])
        cfgs = _configs(rng, size)
        if b == 0 and size > 2:
            cfgs[2] = (HOSTILE_MODEL, *cfgs[2][1:])
        baselines = {}
        for m in dict.fromkeys(c[0] for c in cfgs):
            valid = not (b == n_boards - 1 and m == "bow")  # one baseline at chance
            baselines[m] = {"model": m, "utility": round(rng.uniform(0.7, 0.92), 4),
                            "privacy": round(rng.uniform(0.0, 0.15), 4),
                            "privacy_valid": valid, "adversary": rng.choice(_ADVERSARIES),
                            "mia": None, "measures": None,
                            "cells": [_hex(rng, 16) for _ in range(rng.randint(1, 3))]}
        mine = []
        for cfg in cfgs:
            mine.append(_entry(rng, idx, bid, key, cfg, baselines[cfg[0]]))
            idx += 1
        ranked = _rank(mine)
        _pareto(ranked, list(baselines.values()))
        entries += mine
        boards.append({"id": bid, "dataset": ds, "utility_task": key[1],
                       "private_attribute": key[2], "suite_version": key[3],
                       "baselines": list(baselines.values()),
                       "entries": [e["id"] for e in ranked]})
    counts = {s: 0 for s, _k, _l in _SOURCES}
    for e in entries:
        for q in e["points"]:
            for c in q["cells"]:
                for p in c["provenance"]:
                    counts[p["source"]] += 1
    return {
        "schema": "bench-leaderboard", "schema_version": 2, "generated": _GENERATED,
        "generated_by": "bench 0.3.0 (synthetic)", "allow_mixed_versions": False,
        "privacy_adversary": "headline",
        "measure_labels": dict(MEASURE_LABELS),
        "score": {"name": "hypervolume_gain", "interval": "t_bootstrap_se95", "resamples": 1000},
        "sources": [{"id": s, "kind": k, "location": loc, "cells": counts[s],
                     "left_out": 1 if s == "s2" else 0} for s, k, loc in _SOURCES],
        "boards": boards,
        "entries": entries,
        "conflicts": [{"hash": _hex(rng, 16), "name": f"bbc:model=lstm,mech=mvl,eps={e:g}",
                       "sources": ["s0", "s1"],
                       "differences": [f"utility.macro_f1: 0.81 (s0) vs 0.79 (s1) at ε={e:g}"]}
                      for e in (1.0, 10.0)],
        "problems": [f"s2: run 3f2a9c: no {METRICS} artifact; left out",
                     f"s1: cell {HOSTILE_DATASET}: unreadable {SPEC}; left out"],
    }


__all__ = ["HOSTILE_DATASET", "HOSTILE_HREF", "HOSTILE_MECHANISM", "HOSTILE_MODEL",
           "HOSTILE_RUN_BY", "hypervolume", "synthetic_leaderboard"]
