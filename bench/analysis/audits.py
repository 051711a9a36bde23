"""Audit status in the report: ``bench audit`` records matched to the report's configurations.

``bench audit`` writes one status record per mechanism configuration to
``results/audit/<key>.json`` (:func:`bench.audit.write_audit_status`, format ``bench-audit/1``).
The report reads that folder (``<results>/audit`` by default, ``--audit DIR`` to choose
another) and gives every privatized configuration the record whose key is the one
:func:`bench.audit.audit_key` computes from the configuration's mechanism name, ε, mechanism
parameters and sensitivity approach. The parameters are the mechanism's own parameter record
rebuilt from the cell's spec (defaults filled in, fitted statistics left out, as the audit
records them), then the parameters of the spec as written. Dataset, model, mapping,
vocabulary and seed are not part of the key.

Without an audit folder (most users) :func:`load_audits` returns None and the report has no
audit column at all. A file that is not a readable ``bench-audit/1`` record is skipped with a
warning, like an unreadable cell folder.

Example:
    >>> from bench.analysis.audits import load_audits
    >>> audits = load_audits("results/audit")
    >>> audits.match(group).status if audits and audits.match(group) else "not audited"
    'PASS'
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.analysis.results import Group, ReportError, component, to_float

logger = logging.getLogger(__name__)

AUDIT_FORMAT = "bench-audit/1"
"""The record format this report reads (``bench.audit.AUDIT_FORMAT``; a test keeps them equal)."""

PASS, VIOLATION = "PASS", "VIOLATION"
MAX_RECORD_BYTES = 256 * 1024
"""An audit status record is a few hundred bytes; a larger file is not read (issue 48: a
source's ``audit/`` is as untrusted as its cells)."""
MAX_RECORDS = 10_000
"""Records read from one audit folder at most."""

NOT_AUDITED = "not audited"
"""Shown for a privatized configuration without a matching record."""


@dataclass(frozen=True)
class AuditRecord:
    """The fields of one status record the report shows."""

    key: str
    """Configuration key (:func:`bench.audit.audit_key`)."""
    status: str
    """``PASS`` or ``VIOLATION``."""
    file: str
    """File name of the record (for messages)."""
    max_excess: float = math.nan
    """Largest empirical lower bound − claim (> 0 only for a violation; −inf: no finite claim)."""
    draws: int | None = None
    """Mechanism runs per input word."""
    confidence: float = math.nan
    """Family-wise confidence of the audit."""
    pairs_tested: int | None = None
    """Word pairs tested."""
    n_tests: int | None = None
    """Events tested (Bonferroni M)."""
    claimed: str = ""
    """The guarantee the audit checked."""
    created: str = ""
    """When the audit ran (UTC ISO time)."""

    @property
    def violation(self) -> bool:
        """Whether the audit found a violation."""
        return self.status == VIOLATION

    def excess_text(self) -> str:
        """``max excess +0.481`` (signed, 3 decimals)."""
        x = self.max_excess
        if math.isnan(x):
            return "max excess ?"
        if math.isinf(x):
            return "max excess " + ("+inf" if x > 0 else "−inf (no finite claim)")
        return f"max excess {x:+.3f}".replace("-", "−")

    def size_text(self) -> str:
        """``200,000 draws per word, 8 word pairs, 217 tests, confidence 0.95``."""
        size = []
        if self.draws is not None:
            size.append(f"{self.draws:,} draws per word")
        if self.pairs_tested is not None:
            size.append(f"{self.pairs_tested} word pairs")
        if self.n_tests is not None:
            size.append(f"{self.n_tests} tests")
        if math.isfinite(self.confidence):
            size.append(f"confidence {self.confidence:g}")
        return ", ".join(size)

    def detail(self) -> str:
        """Status, excess, size, claim, date and key in one line (the leaderboard's tooltip)."""
        parts = [f"{self.status}: {self.excess_text()} (empirical lower bound − claim)",
                 self.size_text(), f"claimed: {self.claimed}" if self.claimed else "",
                 f"audited {self.created}" if self.created else "", f"key {self.key}"]
        return "; ".join(p for p in parts if p)


@dataclass
class AuditSet:
    """The status records of one audit folder, by key."""

    records: dict[str, AuditRecord]
    """Valid records by key."""
    warnings: list[str] = field(default_factory=list)
    """Files that were skipped and why."""
    _matches: dict[str, tuple[AuditRecord | None, str]] = field(default_factory=dict,
                                                                repr=False)
    # lookup() results by Config.ident (memoised: the same configuration is asked for often)

    def lookup(self, group: Group) -> tuple[AuditRecord | None, str]:
        """(matching record or None, the key it was found under or the first key tried)."""
        ident = group.config.ident
        if ident not in self._matches:
            keys = [] if group.config.is_baseline else config_keys(group)
            found = next((k for k in keys if k in self.records), None)
            self._matches[ident] = ((self.records[found], found) if found is not None
                                    else (None, keys[0] if keys else ""))
        return self._matches[ident]

    def match(self, group: Group) -> AuditRecord | None:
        """The record of a privatized configuration (None: not audited, or the baseline)."""
        return self.lookup(group)[0]

    def unmatched(self, groups: Sequence[Group]) -> list[AuditRecord]:
        """Records that match no configuration of ``groups`` (sorted by key)."""
        used = {rec.key for g in groups if (rec := self.match(g)) is not None}
        return [r for k, r in sorted(self.records.items()) if k not in used]


def _constructed_params(name: str, epsilon: float, params: Mapping[str, Any]) -> dict | None:
    """The mechanism's own parameter record (``Mechanism.params``: configured values, defaults
    filled in, no fitted statistics) for a configuration — what ``bench audit`` keys on."""
    from bench.mechanisms import MECHANISMS

    try:
        return dict(MECHANISMS.create(name, epsilon=float(epsilon), **dict(params)).params)
    except Exception:  # noqa: BLE001 - unknown mechanism or parameters: fall back to the spec
        return None


def config_keys(group: Group) -> list[str]:
    """Audit keys a configuration may have been audited under, most precise first.

    Per cell: the key from the mechanism's own parameter record, rebuilt from the cell's spec
    (:attr:`bench.mechanisms.base.Mechanism.params`: defaults filled in, fitted statistics such
    as TEM's γ or truncated Gumbel's b left out — exactly what ``bench audit`` records), then the
    key from the spec's mechanism parameters as written.
    """
    from bench.audit import audit_key  # lazy: only reports with an audit folder need it

    keys: list[str] = []
    for r in group.records:
        name, params, _version = component(r.spec, "mechanism")
        sens = component(r.spec, "sensitivity")[0]
        candidates = []
        built = _constructed_params(name, r.epsilon, params)
        if built is not None:
            candidates.append(audit_key(name, r.epsilon, built, sens))
        candidates.append(audit_key(name, r.epsilon, params, sens))
        for k in candidates:
            if k not in keys:
                keys.append(k)
    return keys


def _int(v: Any) -> int | None:
    f = to_float(v)
    return int(f) if math.isfinite(f) else None


def parse_record(rec: Any, file: str) -> AuditRecord:
    """An :class:`AuditRecord` from a parsed status file.

    Raises:
        TypeError: not a JSON object.
        ValueError: not a ``bench-audit/1`` object with a string ``key`` and a ``status`` of
            ``PASS``/``VIOLATION``.
    """
    if not isinstance(rec, Mapping):
        raise TypeError(f"not a JSON object but {type(rec).__name__}")
    fmt = rec.get("format")
    if fmt != AUDIT_FORMAT:
        raise ValueError(f"unknown format {fmt!r} (expected {AUDIT_FORMAT!r})")
    key, status = rec.get("key"), rec.get("status")
    if not isinstance(key, str) or not key:
        raise ValueError("no 'key'")
    if status not in (PASS, VIOLATION):
        raise ValueError(f"status {status!r} is neither {PASS!r} nor {VIOLATION!r}")
    return AuditRecord(key=key, status=status, file=file,
                       max_excess=to_float(rec.get("max_excess")), draws=_int(rec.get("draws")),
                       confidence=to_float(rec.get("confidence")),
                       pairs_tested=_int(rec.get("pairs_tested")),
                       n_tests=_int(rec.get("n_tests")), claimed=str(rec.get("claimed") or ""),
                       created=str(rec.get("created") or ""))


def load_audits(folder: str | Path, *, required: bool = False) -> AuditSet | None:
    """Read every ``*.json`` status record of an audit folder.

    Args:
        folder: the folder ``bench audit --results-dir`` wrote to.
        required: the folder was named explicitly (``--audit``): a missing folder is an error.

    Returns:
        The :class:`AuditSet` (bad files skipped with a warning), or None when ``folder`` does
        not exist and is not required (the report then has no audit column).

    Raises:
        ReportError: ``required`` and ``folder`` is not a directory.
    """
    folder = Path(folder)
    if not folder.is_dir():
        if required or folder.exists():
            raise ReportError(f"audit folder {folder} does not exist or is not a folder "
                              "(write records with `bench audit ... --results-dir DIR`)")
        return None
    from bench.results.store import parse_object, read_regular

    out = AuditSet({})
    if folder.is_symlink():  # a submitted folder's link may lead anywhere: not followed
        out.warnings.append(f"audit folder {folder.name} is a symbolic link (not followed)")
        logger.warning(out.warnings[-1])
        return out
    paths = sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))
    if len(paths) > MAX_RECORDS:
        out.warnings.append(f"audit folder {folder.name}: {len(paths)} records, only the first "
                            f"{MAX_RECORDS} read")
    for path in paths[:MAX_RECORDS]:
        try:  # a regular file of bounded size and nesting (a FIFO, /dev/zero: refused)
            rec = parse_record(parse_object(read_regular(path, MAX_RECORD_BYTES), path.name),
                               path.name)
        except (OSError, TypeError, ValueError) as e:  # incl. JSONDecodeError, UnicodeDecodeError
            out.warnings.append(f"audit record {path.name}: not a readable {AUDIT_FORMAT} "
                                f"status record ({e}); ignored")
            continue
        if rec.key in out.records:
            out.warnings.append(f"audit records {out.records[rec.key].file} and {path.name} "
                                f"have the same key {rec.key}; only {path.name} is shown")
        out.records[rec.key] = rec
    for w in out.warnings:
        logger.warning(w)
    return out


def audit_counts(audits: AuditSet, groups: Sequence[Group]) -> dict[str, int]:
    """Records read; privatized configurations audited, violating and not audited."""
    priv = [g for g in groups if not g.config.is_baseline]
    matched = [audits.match(g) for g in priv]
    return {"records": len(audits.records),
            "audited": sum(m is not None for m in matched),
            "violations": sum(m is not None and m.violation for m in matched),
            "not_audited": sum(m is None for m in matched)}


__all__ = ["NOT_AUDITED", "AuditRecord", "AuditSet", "audit_counts", "config_keys",
           "load_audits", "parse_record"]
