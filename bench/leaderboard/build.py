"""From merged cells to ``leaderboard.json``: boards, entries, points, scores, ranks.

The cells are read the way ``bench report`` reads them (:mod:`bench.analysis.results`,
:mod:`bench.analysis.privacy`): pooled over seeds per configuration and ε, privacy as the
strongest adversary (or the one chosen) with its validity judged on the baseline. A *board* is
one dataset × utility task × private attribute (× suite version unless mixed versions are
allowed); an *entry* is one configuration on a board, its points are its ε values.
``docs/leaderboard.md`` documents every field.

This is the one builder of both leaderboard pages: ``bench leaderboard`` runs it on many
sources, ``bench report`` on the one folder it reports (:mod:`bench.leaderboard.report_page`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

import bench
from bench.analysis.anchored import CellAnchored, anchored_cells, group_anchored
from bench.analysis.audits import NOT_AUDITED, AuditSet, load_audits
from bench.analysis.baseline import BaselineIndex
from bench.analysis.guarantees import describe_guarantee
from bench.analysis.measures import MEASURE_LABELS, point_measures
from bench.analysis.privacy import (
    HEADLINE,
    GroupPrivacy,
    baseline_index,
    group_mia,
    group_privacy,
    select_privacy,
)
from bench.analysis.results import CellRecord, Group, component, group_cells
from bench.leaderboard.bounds import oversized
from bench.leaderboard.data_claims import check_data_claims
from bench.leaderboard.merge import CONFLICT, UNSEALED, MergedCell, merge, platform_of
from bench.leaderboard.rank import Point, Score, board_power, rank, score
from bench.leaderboard.rows import Row, rows_by_config
from bench.leaderboard.sources import Source
from bench.leaderboard.titles import BoardInfo, describe_board, titles

SCHEMA = "bench-leaderboard"
SCHEMA_VERSION = 2
"""2: the score is the hypervolume of the anchored points (``anchored_hypervolume``), points
carry ``retained``, ``gained``, ``tradeoff`` and ``favourable``; 1: the hypervolume gain over
the baseline in the raw (privacy, utility) plane."""
MIXED = "mixed"
"""``suite_version`` of a board that ranks several suite versions together."""
NO_ATTRIBUTE = ""
"""The attribute of the board of configurations that measure none (null in the JSON)."""


def _utility_task(row: Row) -> str:
    tasks = {str(r.sections.utility.task or "utility") for r in row.records()}
    return " / ".join(sorted(tasks))


def _attributes(row: Row) -> list[str]:
    names: set[str] = set()
    for r in row.records():
        names |= set(r.sections.attributes)
    return sorted(names)


def _point(g: Group, task: str) -> tuple[Point | None, GroupPrivacy]:
    """The bootstrap :class:`Point` of one ε (None: no valid paired values) and its privacy."""
    gp = group_privacy(g, task)
    pairs, p_cis, u_cis = [], [], []
    for r in g.records:
        m = r.sections
        p = m.attribute(task)
        if task not in m.attributes or p.privacy_valid is False:
            continue
        pv, uv = p.privacy, m.utility.macro_f1
        if isinstance(pv, (int, float)) and isinstance(uv, (int, float)) \
                and math.isfinite(pv) and math.isfinite(uv):
            pairs.append((float(pv), float(uv)))
            p_cis.append(p.privacy_ci95)
            u_cis.append(m.utility.macro_f1_ci95)
    if not pairs:
        return None, gp
    single = len(pairs) == 1
    return Point(tuple(p for p, _u in pairs), tuple(u for _p, u in pairs),
                 _ci(p_cis[0]) if single else None, _ci(u_cis[0]) if single else None), gp


ANCHORED_BASE = Point((0.0,), (1.0,))
"""The unprivatized baseline in the anchored plane: no privacy gained, all utility retained.
It covers no area, so an entry's score is the hypervolume of its own anchored points."""


def _anchored_point(cells: list[CellAnchored]) -> Point | None:
    """The :class:`Point` of one ε in the anchored plane (privacy gained, utility retained;
    :mod:`bench.analysis.anchored`) from its cells' :func:`~bench.analysis.anchored.
    anchored_cells`; None where no seed has both values (no chance level recorded, no
    baseline)."""
    cells = [c for c in cells if c.retained is not None and c.gained is not None]
    if not cells:
        return None
    one = cells[0] if len(cells) == 1 else None
    return Point(tuple(c.gained for c in cells), tuple(c.retained for c in cells),  # type: ignore[misc]
                 one.gained_ci if one else None, one.retained_ci if one else None)


def _ci(v: Any) -> tuple[float, float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(
            isinstance(x, (int, float)) and math.isfinite(x) for x in v):
        return float(v[0]), float(v[1])
    return None


def _stat_json(s: Any) -> tuple[float | None, list[float] | None]:
    if s is None:
        return None, None
    return float(s.mean), ([float(s.lo), float(s.hi)] if s.has_interval else None)


def _signer(kid: str | None, keys: Mapping[str, str]) -> dict[str, Any] | None:
    """A verified signer as the page shows it: the key id and the keyring's name for it
    (None: a key the maintainer's keyring does not list)."""
    return None if kid is None else {"key": kid, "name": keys.get(kid)}


def _cells_json(g: Group, copies: Mapping[str, MergedCell],
                keys: Mapping[str, str]) -> list[dict[str, Any]]:
    out = []
    for r in g.records:
        m = copies[r.hash]
        out.append({
            "hash": r.hash, "seed": r.seed, "platform": m.platform,
            "unranked": m.unranked or None,
            "href": next((c.href for c in m.copies if c.href), None),
            "mlflow": next((c.mlflow for c in m.copies if c.mlflow), None),
            # the numeric platform by its id (the full record stays in the cell's manifest);
            # who sealed each copy, as its signature proves (run_by is only a claim)
            "provenance": [{"source": c.source, **c.provenance, "numeric": platform_of(c),
                            "sealed": c.sealed, "signer": _signer(c.signer, keys)}
                           for c in m.copies]})
    return out


def _signed_by(row: Row, copies: Mapping[str, MergedCell],
               keys: Mapping[str, str]) -> tuple[list[dict[str, Any]], int]:
    """The verified signers of the copies an entry's points use, and how many of its cells
    are unsigned."""
    used = [copies[r.hash].copies[0] for r in row.records()]
    kids = sorted({c.signer for c in used if c.signer})
    return [_signer(k, keys) for k in kids], sum(c.signer is None for c in used)


_HELD = {CONFLICT: "conflict", UNSEALED: "unsealed"}
"""rank_flag of an entry resting on a cell held out of the ranking (its baseline's: prefixed
``baseline ``)."""


def _held_out(row: Row | None, copies: Mapping[str, MergedCell]) -> str:
    """Why the row's cells keep it out of the ranking (:data:`_HELD`), or ``""``."""
    why = {copies[r.hash].unranked for r in row.records()} if row is not None else set()
    return next((_HELD[k] for k in (CONFLICT, UNSEALED) if k in why), "")


def _row_sources(row: Row, copies: Mapping[str, MergedCell]) -> set[str]:
    """The sources that hold a copy of any of the entry's cells."""
    return {c.source for r in row.records() for c in copies[r.hash].copies}


def _audit(row: Row, audits: Sequence[tuple[AuditSet, str | None]],
           copies: Mapping[str, MergedCell]) -> tuple[str, list[str]]:
    """The entry's audit status and each ε's (in ε order): PASS / VIOLATION / not audited.

    The entry: VIOLATION if any ε violates, PASS if every ε passed, else not audited. An
    audit set found in a source (``owner``) counts only for entries whose every cell comes
    from that source alone, so no contributor can mark another's entries; the maintainer's
    ``--audit`` folders and the report's audit records (owner None) count for all."""
    if row.is_baseline:
        return "", []
    own = _row_sources(row, copies)
    usable = [a for a, owner in audits if owner is None or own == {owner}]
    found = []
    for _eps, g in sorted(row.by_eps.items()):
        matches = (a.match(g) for a in usable)
        found.append(next((r for r in matches if r is not None), None))
    each = [NOT_AUDITED if r is None else r.status for r in found]
    if any(r is not None and r.violation for r in found):
        return "VIOLATION", each
    if found and all(r is not None for r in found):
        return "PASS", each
    return NOT_AUDITED, each


def _mia(g: Group) -> dict[str, Any] | None:
    """The membership-inference AUC of one ε (None: no cell ran one): the mean over the seeds
    whose MIA is valid with its 95% interval, the attack, and ``valid`` (false: no seed's MIA
    is valid, null: some seeds' are not)."""
    gm = group_mia(g)
    if gm is None:
        return None
    auc, ci = _stat_json(gm.stat)
    valid = True if not gm.n_invalid else (False if gm.n_invalid == gm.n else None)
    return {"auc": auc, "auc_ci": ci, "attack": gm.attack or None, "valid": valid}


def _void(row: Row) -> bool:
    """Whether a cell of the row has no DP guarantee at all (a departure run with
    ``allow_no_guarantee``: :attr:`bench.guarantee.Guarantee.void`)."""
    return any((r.sections.guarantee or {}).get("void") is True for r in row.records())


def _guarantee(row: Row) -> str:
    texts: list[str] = []
    for r in row.records():
        gd = r.sections.guarantee
        t = describe_guarantee(gd) + (" (estimated)" if gd and gd.get("proven") is False
                                      else "")
        if t not in texts:
            texts.append(t)
    return " / ".join(texts)


@dataclass
class _Board:
    key: tuple[str, str, str, str]
    rows: list[Row] = field(default_factory=list)
    baselines: list[Row] = field(default_factory=list)

    @cached_property
    def index(self) -> BaselineIndex:
        """The board's baselines by exact hash, built once for all its entries."""
        return baseline_index(r for b in self.baselines for r in b.records())


_SUITE_LABEL = re.compile(r"\(suite=[^,()]*\)|, suite=[^,()]*|suite=[^,()]*, ")


def _boards(rows: Sequence[Row], allow_mixed: bool) -> list[_Board]:
    """The boards of the rows. A configuration that measures no private attribute (e.g. a
    grid of membership inference only) goes on a board of attribute ``""``, listed with its
    utility, N_w and MIA and never ranked (``rank_flag`` ``"no private attribute"``)."""
    boards: dict[tuple[str, str, str, str], _Board] = {}
    for row in rows:
        # with several suite versions the report labels datasets "suite=<v>"; a mixed board
        # holds them all, so its dataset is named without it
        dataset = _SUITE_LABEL.sub("", row.dataset) if allow_mixed else row.dataset
        for attr in _attributes(row) or [NO_ATTRIBUTE]:
            key = (dataset, _utility_task(row), attr, MIXED if allow_mixed else row.suite)
            b = boards.setdefault(key, _Board(key))
            (b.baselines if row.is_baseline else b.rows).append(row)
    return [boards[k] for k in sorted(boards)]


def _board_info(board: _Board) -> BoardInfo:
    """The board in words (:mod:`bench.leaderboard.titles`): from the cells on it."""
    rows = board.rows + board.baselines
    _dataset, task, attr, suite = board.key
    return describe_board((r for row in rows for r in row.records()), task=task,
                          attribute=attr, suite=suite, models=(row.model for row in rows))


def _baseline_for(board: _Board, row: Row) -> Row | None:
    """The board's baseline row holding the baselines of the row's cells, each paired by the
    one rule (:class:`bench.analysis.baseline.BaselineIndex`); the most common where the
    seeds disagree, None where no cell has one."""
    index: BaselineIndex[int] = BaselineIndex()
    for i, b in enumerate(board.baselines):
        for r in b.records():
            index.add(r.spec, r.dataset_hash, i, r.suite_version, hash=r.hash)
    found = Counter(i for r in row.records()
                    if (i := index.find(r.spec, r.dataset_hash, r.suite_version)) is not None)
    return board.baselines[min(found, key=lambda i: (-found[i], i))] if found else None


@dataclass
class _Options:
    resamples: int
    seed: int
    audits: list[tuple[AuditSet, str | None]]
    """Audit sets with the source that holds them (None: the maintainer's ``--audit``)."""
    copies: dict[str, MergedCell]
    keys: Mapping[str, str] = field(default_factory=dict)
    """The maintainer's keyring: ``{key id: contributor name}``."""


def _rng(seed: int, key: tuple, row: Row) -> np.random.Generator:
    """The bootstrap stream of one entry: the leaderboard's seed and the entry's identity, so
    an entry's interval does not depend on which other entries are on the board."""
    return _stream(seed, [list(key), row.dataset, row.model, row.sensitivity, row.mechanism,
                          row.mapping, row.suite])


def _stream(seed: int, ident: list) -> np.random.Generator:
    """A generator seeded with ``seed`` and an identity (JSON-encoded, hashed): each entry's
    stream is its own, whatever else is on the board."""
    text = json.dumps(ident, ensure_ascii=True)
    return np.random.default_rng([seed, int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)])


_COMPONENT_KINDS = ("dataset", "model", "mechanism", "sensitivity", "mapping", "rewriter")


def _unknown_components(row: Row) -> str:
    """The components of the row's cells that this installation does not register (``""``:
    none), e.g. ``mechanism 'tem2'``. A name the suite does not know -- a made-up one, or a
    plugin not installed where the board is built -- says nothing about what was computed,
    so its entry is listed, never ranked (issue 48, trial 9)."""
    from bench.grid.components import registry
    from bench.grid.schema import BASELINE
    from bench.models import MODELS

    out = set()
    for r in row.records():
        for kind in _COMPONENT_KINDS:
            entry = r.spec.get(kind)
            if kind == "rewriter" and not entry:
                continue
            name = component(r.spec, kind)[0]
            if (kind == "mechanism" and name == BASELINE) or (kind == "rewriter"
                                                                and name == "none"):
                continue
            if name not in (MODELS if kind == "model" else registry(kind)):
                out.add(f"{kind} {name!r}")
    return ", ".join(sorted(out))


def _entry(board: _Board, row: Row, opts: _Options,
           ) -> tuple[dict[str, Any], Score | None, bool]:
    """One entry's JSON (without id/rank), its score and whether it has an audit violation."""
    attr = board.key[2]
    points, json_points, flags, anchored = [], [], [], []
    audit, audits = _audit(row, opts.audits, opts.copies)
    index = board.index
    for k, (eps, g) in enumerate(sorted(row.by_eps.items())):
        pt, gp = _point(g, attr)
        cells = anchored_cells(g, attr or None, index)
        an = group_anchored(g, attr or None, index, cells=cells)
        if gp.status == "invalid":
            an = an.without_privacy()
        ra, ra_ci = _stat_json(an.retained)
        ga, ga_ci = _stat_json(an.gained)
        ta, ta_ci = _stat_json(an.tradeoff)
        u, u_ci = _stat_json(g.stat(lambda m: m.utility.macro_f1,
                                    lambda m: m.utility.macro_f1_ci95))
        p, p_ci = _stat_json(gp.stat)
        nw = g.stat(lambda m: m.n_w)
        json_points.append({
            "epsilon": eps, "utility": u, "utility_ci": u_ci, "privacy": p, "privacy_ci": p_ci,
            "privacy_valid": gp.valid, "adversary": gp.adversary or None,
            "retained": ra, "retained_ci": ra_ci, "gained": ga, "gained_ci": ga_ci,
            "tradeoff": ta, "tradeoff_ci": ta_ci, "favourable": an.favourable,
            "n_w": None if nw is None else float(nw.mean), "pareto": False,
            "mia": _mia(g), "measures": point_measures(g), "audit": audits[k],
            "cells": _cells_json(g, opts.copies, opts.keys)})
        points.append(pt)
        anchored.append(_anchored_point(cells) if attr != NO_ATTRIBUTE else None)
        flags.append(gp.status)
    base = _baseline_for(board, row)
    base_pt, base_invalid = None, False
    if base is not None:
        bg = next(iter(base.by_eps.values()))
        base_pt, bgp = _point(bg, attr)
        flags.append(bgp.status)
        base_invalid = bgp.status in ("invalid", "partial")
    flag, sc = "", None
    if attr == NO_ATTRIBUTE:
        flag = "no private attribute"
    elif base_pt is None and not base_invalid:  # a baseline whose privacy is invalid: below
        flag = "no baseline"
    elif any(f in ("invalid", "partial") for f in flags):
        flag = "invalid privacy"
    elif any(f != "valid" for f in flags) or any(pt is None for pt in points):
        flag = "privacy validity unknown"
    elif any(pt is None for pt in anchored):
        flag = "no anchored score (a chance level or a seed's baseline is missing)"
    else:
        sc = score(anchored, ANCHORED_BASE, resamples=opts.resamples,  # type: ignore[arg-type]
                   rng=_rng(opts.seed, board.key, row))
        if sc.ci is None:
            flag = "no interval"
    if sc is not None and _void(row):  # a departure from DP: listed with why, never ranked
        flag, sc = "no DP guarantee", None
    unknown = _unknown_components(row)
    if unknown:  # nothing here says what it computes: listed, never ranked
        flag, sc = f"unknown {unknown} (not registered here)", None
    base_held = _held_out(base, opts.copies)
    held = _held_out(row, opts.copies) or (f"baseline {base_held}" if base_held else "")
    if held and attr != NO_ATTRIBUTE:  # listed, with why, never ranked
        flag, sc = held, None
    if sc is not None and audit == "VIOLATION":
        flag = "audit violation"
    signed_by, unsigned = _signed_by(row, opts.copies, opts.keys)
    entry = {
        "board": None, "dataset": row.dataset, "model": row.model,
        "mechanism": row.mechanism, "sensitivity": row.sensitivity, "mapping": row.mapping,
        "config": row.config, "suite_version": row.suite, "guarantee": _guarantee(row),
        "audit": audit, "score": None if sc is None else sc.value,
        "score_ci": None if sc is None or sc.ci is None else list(sc.ci),
        "score_seeds": None if sc is None else sc.seeds,
        "rank": None, "rank_flag": flag, "signed_by": signed_by, "unsigned_cells": unsigned,
        "points": json_points,
        "platforms": sorted({c["platform"] for p in json_points for c in p["cells"]}),
        # the plugin packages (distribution and version) that computed the entry's cells
        "plugins": sorted({v for r in row.records() for v in r.plugins.values()})}
    return entry, sc, audit == "VIOLATION"


def _baseline_json(row: Row, attr: str) -> dict[str, Any]:
    g = next(iter(row.by_eps.values()))
    gp = group_privacy(g, attr)
    u = g.stat(lambda m: m.utility.macro_f1)
    return {"model": row.model, "suite_version": row.suite,
            "utility": None if u is None else float(u.mean),
            "privacy": None if gp.stat is None else float(gp.stat.mean),
            "privacy_valid": gp.valid, "adversary": gp.adversary or None, "mia": _mia(g),
            "measures": point_measures(g), "cells": [r.hash for r in g.records]}


def _pareto(entries: Sequence[dict[str, Any]], baselines: Sequence[dict[str, Any]]) -> None:
    """Mark the points no other point of the board (baselines included) dominates."""
    pts = [(p["privacy"], p["utility"]) for e in entries for p in e["points"]
           if p["privacy_valid"] and p["privacy"] is not None and p["utility"] is not None]
    pts += [(b["privacy"], b["utility"]) for b in baselines
            if b["privacy_valid"] and b["privacy"] is not None and b["utility"] is not None]
    for e in entries:
        for p in e["points"]:
            if not (p["privacy_valid"] and p["privacy"] is not None and p["utility"] is not None):
                continue
            pp, uu = p["privacy"], p["utility"]
            p["pareto"] = not any(p2 >= pp and u2 >= uu and (p2 > pp or u2 > uu)
                                  for p2, u2 in pts)


def fresh_seed() -> int:
    """A seed for the choice of cells to recompute from the operating system's randomness
    (:func:`secrets.randbits`): unknowable before the run, recorded in the document after it
    (issue 48: a seed of 0 by default let a forger compute the draw offline)."""
    return secrets.randbits(63)


def _verify(made_all: list[list[tuple]], copies: dict[str, MergedCell], n: int,
            seed: int) -> list[str]:
    """Recompute ``n`` cells of every entry (:mod:`bench.leaderboard.recompute`), set each
    entry's ``verification``, and return the refuted sources."""
    from bench.leaderboard.recompute import Recomputer, entry_verification

    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        rc = Recomputer(copies, Path(tmp))
        for made in made_all:
            for e, _sc, _v in made:
                hashes = sorted({c["hash"] for p in e["points"] for c in p["cells"]})
                rng = _stream(seed, [e["dataset"], e["model"], e["config"], e["suite_version"]])
                chosen = sorted(rng.choice(hashes, size=min(n, len(hashes)), replace=False)
                                ) if hashes else []
                checks = {c.hash: c for h in chosen for c in rc.checks(str(h))}
                e["verification"] = entry_verification(list(checks.values()))
    return sorted({s for c in rc.checked.values() for s in c.refuted})


def _exclude_refuted(made: list[tuple], copies: dict[str, MergedCell],
                     refuted: set[str]) -> list[tuple]:
    """Entries refuted by their own check, or resting on a cell that only refuted sources
    hold, lose their score: ``rank_flag`` ``"refuted"``. Entries that could not be verified
    (a chosen cell or its baseline not checked: another platform, an old format, data the
    verifier does not hold, ...) keep their score but are not ranked: ``rank_flag``
    ``"unverified: <reason>"`` (issue 48, trial 5: a copy claiming an old suite version or
    another platform chose to be unverified and stayed ranked)."""
    out = []
    for e, sc, v in made:
        cells = {c["hash"] for p in e["points"] for c in p["cells"]}
        only_refuted = any({c.source for c in copies[h].copies} <= refuted for h in cells)
        status = e.get("verification", {}).get("status")
        if status == "refuted" or only_refuted:
            e["score"], e["score_ci"], e["score_seeds"], e["rank_flag"] = None, None, None, \
                "refuted"
            sc = None
        elif status == "unverified" and sc is not None:
            reasons = [c["reason"] for c in e["verification"]["cells"]
                       if c["status"] != "bit-exact"]
            e["rank_flag"] = "unverified: " + (reasons[0] if reasons else "no cell checked")
            sc = None
        out.append((e, sc, v))
    return out


def build(sources: Sequence[Source], *, allow_mixed_versions: bool = False,
          resamples: int = 1000, seed: int = 0,
          extra_audits: Sequence[str | Path] = (),
          trusted: Sequence[str] = (), verify: int = 0,
          verify_seed: int | None = None, adversary: str | None = None,
          audit_sets: Sequence[AuditSet] = (), stamp: bool = True,
          keys: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``leaderboard.json`` document of ``sources`` (``docs/leaderboard.md``); with
    ``verify`` > 0, ``verify`` cells of every entry are recomputed first
    (:mod:`bench.leaderboard.recompute`), drawn with ``verify_seed`` (None: a fresh seed from
    the operating system's randomness, so no submitter can know the draw in advance; the seed
    used is recorded in the document's ``verify.seed``, and passing it again repeats the draw).

    ``adversary``: which adversary privacy is read from (:func:`bench.analysis.privacy.
    select_privacy`; None: the strongest). ``extra_audits`` (folders) and ``audit_sets``
    (records already read): audit records that count for every entry. ``stamp`` False leaves
    out the date and the bench version (``generated``, ``generated_by`` null), so the same
    cells always give the same document (the committed per-grid pages). ``keys``: the
    maintainer's keyring, ``{key id: name}`` (:func:`bench.results.signing.read_keyring`);
    a verified signer it does not list is shown by its key.
    """
    checked, data_warnings = check_data_claims(sources)
    cells, conflicts, variants = merge(list(checked), frozenset(trusted))
    copies = {m.hash: m for m in cells}
    records = select_privacy([CellRecord(m.hash, m.spec, m.metrics, Path(m.hash))
                              for m in cells], adversary)
    groups, warnings = group_cells(records)
    audit_dirs = [(d, s.id) for s in checked for d in s.audit_folders]
    audit_dirs += [(Path(a), None) for a in extra_audits]
    audits = [(a, owner) for a, owner in ((load_audits(d), o) for d, o in audit_dirs)
              if a is not None]
    audits += [(a, None) for a in audit_sets]
    opts = _Options(resamples, seed, audits, copies, dict(keys or {}))
    boards_json, entries_json = [], []
    rows = rows_by_config(groups)
    boards = list(_boards(rows, allow_mixed_versions))
    made_all = [[_entry(board, row, opts) for row in board.rows] for board in boards]
    over = oversized(checked, [[e for e, _sc, _v in made] for made in made_all])
    if over:  # those sources are left out whole (each with its line), the board built again
        return build([Source(s.id, s.kind, s.location, problems=[over[s.id]])
                      if s.id in over else s for s in sources],
                     allow_mixed_versions=allow_mixed_versions, resamples=resamples,
                     seed=seed, extra_audits=extra_audits, trusted=trusted, verify=verify,
                     verify_seed=verify_seed, adversary=adversary, audit_sets=audit_sets,
                     stamp=stamp, keys=keys)
    infos = [_board_info(board) for board in boards]
    titles(infos)
    refuted: list[str] = []
    if verify > 0 and verify_seed is None:
        verify_seed = fresh_seed()
    if verify > 0:
        refuted = _verify(made_all, copies, verify, int(verify_seed))  # type: ignore[arg-type]
        made_all = [_exclude_refuted(made, copies, set(refuted)) for made in made_all]
    for bi, (board, made, info) in enumerate(zip(boards, made_all, infos, strict=True)):
        ranks = rank([sc for _e, sc, _v in made], [v for _e, _sc, v in made])
        baselines = [_baseline_json(b, board.key[2]) for b in board.baselines]
        entries = []
        for (e, _sc, _v), r in zip(made, ranks, strict=True):
            e["rank"] = r
            entries.append(e)
        _pareto(entries, baselines)
        power = board_power([sc for _e, sc, _v in made], ranks)
        entries.sort(key=lambda e: (e["rank"] is None, e["rank"] or 0,
                                    -(e["score"] or 0.0), e["model"], e["config"]))
        bid = f"b{bi}"
        ids = []
        for e in entries:
            e["id"], e["board"] = f"e{len(entries_json)}", bid
            ids.append(e["id"])
            entries_json.append(e)
        dataset, task, attr, suite = board.key
        boards_json.append({"id": bid, "dataset": dataset, "utility_task": task,
                            "private_attribute": attr or None, "suite_version": suite,
                            "title": info.title, "dataset_title": info.dataset_title,
                            "settings": info.settings, "power": power,
                            "baselines": baselines, "entries": ids})
    problems = [p for s in checked for p in s.problems] + data_warnings + warnings
    problems += [w for a, _owner in audits for w in a.warnings]
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) if stamp else None,
        "generated_by": f"bench {bench.__version__}" if stamp else None,
        "allow_mixed_versions": allow_mixed_versions,
        "privacy_adversary": adversary or HEADLINE,
        "measure_labels": _measure_labels(entries_json),
        "score": {"name": "anchored_hypervolume", "interval": "t_bootstrap_se95",
                  "resamples": resamples, "seed": seed},
        "sources": [s.describe() | {"trusted": s.id in trusted} for s in checked],
        "boards": boards_json, "entries": entries_json,
        "conflicts": conflicts, "platform_variants": variants, "problems": problems,
        "verify": {"cells_per_entry": verify, "seed": verify_seed, "refuted_sources": refuted,
                   "counts": {st: sum(e["verification"]["status"] == st for e in entries_json)
                              for st in ("verified", "refuted", "unverified")}}
        if verify > 0 else None}


def _measure_labels(entries: list[dict[str, Any]]) -> dict[str, str]:
    """The headers of the measures the entries' points hold (in :data:`MEASURE_LABELS` order):
    a page lists only what it shows, so a new measure changes no page without it."""
    used = {k for e in entries for q in e.get("points", ()) for k in (q.get("measures") or {})}
    return {k: v for k, v in MEASURE_LABELS.items() if k in used}
