"""Empirical privacy audit (``bench audit``): a statistical lower bound on a configuration's
privacy loss, compared with the guarantee it claims.

For word pairs (w, w′) of the public vocabulary (nearest, random, far and frequent pairs) the
mechanism runs many times on each word (vectorised). Every check compares the probabilities of
an *event* S of the output under the two inputs: a Clopper–Pearson lower bound on P(M(w) ∈ S)
and an upper bound on P(M(w′) ∈ S) give a lower confidence bound on the privacy loss
ln(P/P′), which must not exceed the claim — ε·d(w, w′)·multiplier for metric DP (or the
tighter claim in the space the mechanism runs in, see :func:`pair_claim`), ε for pure DP, ε with
δ subtracted from P for (ε, δ)-DP. Any event is allowed (post-processing), so:

- discrete outputs (selection mechanisms; additive mechanisms after their nearest mapping): the
  single output words and the union of the high-ratio words;
- vector outputs (additive mechanisms before the mapping): tails of two statistics, the
  projection (z − x)·v onto v = (x′ − x)/‖x′ − x‖ and the distance difference
  ‖z − x′‖ − ‖z − x‖ (the likelihood-ratio statistic of isotropic metric mechanisms);
- independence per occurrence: the joint output of the two-token call [w, w] vs [w, w′]
  (composition bounds it by the single-token claim); one noise vector shared across tokens
  makes the difference of the two outputs deterministic and is caught;
- OOV: a made-up token is privatized through the Privatizer; coming back unchanged is an event
  that no vocabulary word's input can produce.

Events are *chosen* on one half of the draws and *tested* on the other half, and every test runs
at level α/M (Bonferroni over all M events of all checks, α = 1 − confidence), so the whole
report's chance of a false VIOLATION is ≤ α. An audit can only find violations, never prove a
guarantee: PASS means "no evidence against the claim at this sample size".

Status files (for the leaderboard): :func:`write_audit_status` writes
``results/audit/<key>.json`` (format in :func:`audit_status` and ``docs/audit.md``).

The package: :mod:`~bench.audit.auditor` (pairs, claims, the checks, :func:`run_audit`,
:func:`cli_audit`), :mod:`~bench.audit.events` (the Clopper–Pearson bounds and the events
chosen on the selection half) and :mod:`~bench.audit.records` (the report, its rows and the
status files). Every public name is importable from ``bench.audit``.

Example:
    >>> report = run_audit("mvl", 1.0, vocab_size=2000, pairs=2, draws=20_000)
    >>> print(report.table()); report.passed
"""

from bench.audit.auditor import (
    MAPPED_DRAWS,
    OOV_PROBE,
    audit_privatizer,
    check_settings,
    choose_pairs,
    cli_audit,
    pair_claim,
    run_audit,
)
from bench.audit.events import EVENTS_PER_DIRECTION, N_QUANTILES, cp_lower, cp_upper
from bench.audit.records import (
    AUDIT_FORMAT,
    AuditReport,
    AuditRow,
    audit_key,
    audit_status,
    read_audit_status,
    write_audit_status,
)

__all__ = [
    "AUDIT_FORMAT",
    "EVENTS_PER_DIRECTION",
    "MAPPED_DRAWS",
    "N_QUANTILES",
    "OOV_PROBE",
    "AuditReport",
    "AuditRow",
    "audit_key",
    "audit_privatizer",
    "audit_status",
    "check_settings",
    "choose_pairs",
    "cli_audit",
    "cp_lower",
    "cp_upper",
    "pair_claim",
    "read_audit_status",
    "run_audit",
    "write_audit_status",
]
