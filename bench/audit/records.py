"""What an audit reports and records: :class:`AuditReport` with its rows (:class:`AuditRow`),
and the status files ``results/audit/<key>.json`` that the report and the leaderboard read
(:func:`audit_key`, :func:`audit_status`, :func:`write_audit_status`,
:func:`read_audit_status`; format ``bench-audit/1``, docs/audit.md).

Example:
    >>> audit_key("mvl", 1.0, {}, "none")  # the report is written to results/audit/<key>.json
    'mvl__eps=1__sens=none'
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

AUDIT_FORMAT = "bench-audit/1"


@dataclass
class AuditRow:
    """One check of one word pair (the best event found for it)."""

    check: str
    """``words`` (discrete outputs), ``vectors`` (before mapping), ``joint`` (two tokens in one
    call) or ``oov`` (out-of-vocabulary pass-through)."""
    kind: str
    """Pair category: nearest, random, far, frequent (or oov)."""
    pair: tuple[str, str]
    """The two input words (w, w′)."""
    distance: float
    """Euclidean distance of the pair in the original embedding space."""
    claimed: float
    """The claimed bound on ln(P/P′) for this pair (``inf`` when the claim does not cover it)."""
    lower_bound: float
    """Largest lower confidence bound on ln(P(M(w)∈S)/P(M(w′)∈S)) over the tested events."""
    status: str
    """``PASS`` or ``VIOLATION``."""
    evidence: str
    """The event with the largest lower bound and its counts."""
    n_events: int = 0
    """Events tested for this row (part of the Bonferroni count)."""

    @property
    def excess(self) -> float:
        """lower_bound − claimed (> 0 is a violation)."""
        return self.lower_bound - self.claimed


@dataclass
class AuditReport:
    """The result of :func:`run_audit`."""

    mechanism: str
    epsilon: float
    params: dict
    sensitivity: str
    guarantee: str
    vocab_size: int
    draws: int
    confidence: float
    n_tests: int
    rows: list[AuditRow] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[AuditRow]:
        """The rows whose lower bound exceeds the claim."""
        return [r for r in self.rows if r.status == "VIOLATION"]

    @property
    def passed(self) -> bool:
        """No violation at the report's confidence."""
        return not self.violations

    @property
    def key(self) -> str:
        """File-name-safe configuration key (see :func:`audit_key`)."""
        return audit_key(self.mechanism, self.epsilon, self.params, self.sensitivity)

    def max_excess(self) -> float:
        """Largest lower_bound − claimed over all rows (−inf without rows)."""
        finite = [r.excess for r in self.rows if math.isfinite(r.claimed)]
        return max(finite) if finite else -math.inf

    def table(self) -> str:
        """The human-readable report."""
        head = [
            f"bench audit: {self.mechanism} eps={self.epsilon:g} params={self.params or {}} "
            f"sensitivity={self.sensitivity}",
            f"claimed: {self.guarantee}",
            f"vocabulary: glove-6b-50d first {self.vocab_size:,} words; draws per input: "
            f"{self.draws:,} (half choose events, half test them); confidence "
            f"{self.confidence:g}, Bonferroni over {self.n_tests} events",
        ]
        rows = [("check", "pair", "words", "d", "claimed", "emp. lower", "status", "evidence")]
        for r in self.rows:
            rows.append((r.check, r.kind, f"{r.pair[0]}/{r.pair[1]}", f"{r.distance:.3f}",
                         _fmt(r.claimed), _fmt(r.lower_bound), r.status, r.evidence))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        body = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        verdict = (f"VIOLATION: {len(self.violations)} of {len(self.rows)} checks exceed the claim"
                   if self.violations else
                   f"PASS: no check exceeds the claim (largest lower bound − claim: "
                   f"{_fmt(self.max_excess())})")
        return "\n".join(head + [""] + body + [""] + self.notes + [verdict, ""])

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable report (no text of any private corpus: vocabulary words only)."""
        out = asdict(self)
        out["rows"] = [{**asdict(r), "excess": r.excess} for r in self.rows]
        return _jsonable(out)


def _fmt(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return f"{x:.3f}"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def audit_key(mechanism: str, epsilon: float, params: dict | None, sensitivity: str) -> str:
    """File-name-safe key of a configuration: ``mvl__eps=1__sens=none`` (+ ``__k=v`` params)."""
    parts = [mechanism, f"eps={epsilon:g}", f"sens={sensitivity}"]
    parts += [f"{k}={v}" for k, v in sorted((params or {}).items())]
    return re.sub(r"[^A-Za-z0-9_.=+-]", "_", "__".join(parts))


def audit_status(report: AuditReport) -> dict[str, Any]:
    """The status record the leaderboard shows (the JSON of ``results/audit/<key>.json``).

    Fields: ``format`` ("bench-audit/1"), ``key``, ``mechanism``, ``epsilon``, ``params``,
    ``sensitivity``, ``status`` ("PASS" or "VIOLATION"), ``claimed`` (guarantee text),
    ``confidence``, ``draws``, ``pairs_tested`` (word pairs, the OOV probe not counted),
    ``n_tests``, ``max_excess`` (largest empirical lower bound minus claim; > 0 only for a
    violation), ``violations`` (the violating rows),
    ``rows`` (every row), ``seconds``, ``created`` (UTC ISO time).
    """
    return _jsonable({
        "format": AUDIT_FORMAT, "key": report.key, "mechanism": report.mechanism,
        "epsilon": report.epsilon, "params": report.params, "sensitivity": report.sensitivity,
        "status": "PASS" if report.passed else "VIOLATION", "claimed": report.guarantee,
        "confidence": report.confidence, "draws": report.draws,
        "pairs_tested": len({(r.kind, r.pair) for r in report.rows if r.check != "oov"}),
        "n_tests": report.n_tests, "max_excess": report.max_excess(),
        "violations": [{**asdict(r), "excess": r.excess} for r in report.violations],
        "rows": [{**asdict(r), "excess": r.excess} for r in report.rows],
        "seconds": report.seconds, "notes": report.notes,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    })


def write_audit_status(report: AuditReport, results_dir: str | Path = "results/audit") -> Path:
    """Write :func:`audit_status` atomically to ``<results_dir>/<key>.json``; returns the path."""
    d = Path(results_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{report.key}.json"
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(audit_status(report), f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_audit_status(results_dir: str | Path = "results/audit") -> dict[str, dict]:
    """All status records under ``results_dir``, by key (for the leaderboard)."""
    out = {}
    for path in sorted(Path(results_dir).glob("*.json")):
        rec = json.loads(path.read_text())
        if rec.get("format") == AUDIT_FORMAT:
            out[rec["key"]] = rec
    return out
