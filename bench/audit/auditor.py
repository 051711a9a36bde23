"""The auditor: word pairs and the privacy loss each may show (:func:`pair_claim`), the
checks that run the mechanism on them, and :func:`run_audit` / :func:`cli_audit` (``bench
audit``). The method is in :mod:`bench.audit`'s docstring and docs/audit.md.

Example:
    >>> report = run_audit("mvl", 1.0, vocab_size=2000, pairs=2, draws=20_000)
    >>> print(report.table()); report.passed
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np

from bench.audit.events import Candidate, cp_lower, cp_upper, discrete_events, tail_events
from bench.audit.records import AuditReport, AuditRow, write_audit_status
from bench.defaults import DEFAULT_EMBEDDING
from bench.embeddings import Embedding, load_embedding
from bench.errors import InputError
from bench.mechanisms import MECHANISMS
from bench.privatize import Privatizer

logger = logging.getLogger(__name__)

OOV_PROBE = "zzqx-audit-oov-token"
MAPPED_DRAWS = 40_000  # draws per input of the words check after an additive mechanism's mapping


def pair_claim(privatizer: Privatizer, a: int, b: int) -> tuple[float, float]:
    """(claimed bound on the privacy loss for inputs a vs b, δ that goes with it).

    Metric DP: the guarantee's ε·multiplier·d(w, w′) in the original space, with its δ; where the
    mechanism states a tighter claim in the space it runs in (exact, δ = 0) that one is used:
    ε/Δ_f·d_f for ``mvl``/``privemb`` (Δ_f = 1 uncalibrated), ε·d_f for the selection
    mechanisms, ε·d_RM for ``mahalanobis``. A mechanism whose metric is not a distance of
    vectors gives it over input ids as ``pair_distance(a, b)`` (``diffractor``: list positions);
    its claim is ε·multiplier·that. Pure/approx: ε (δ). A mechanism with ``same_scope``
    (``custext``) claims nothing (``inf``) for pairs outside its scope.
    """
    mech = privatizer.mechanism
    g = mech.guarantee(privatizer.sensitivity)
    if hasattr(mech, "same_scope") and not bool(mech.same_scope(np.array([a]),
                                                                np.array([b]))[0]):
        return math.inf, 0.0
    if g.kind in ("pure", "approx"):
        return g.epsilon, g.delta
    if hasattr(mech, "pair_distance"):  # metric DP in the mechanism's own metric over words
        return g.effective_epsilon * float(mech.pair_distance(np.array([a]), np.array([b]))[0]), \
            g.delta
    emb = privatizer.embedding
    vin = emb.input_vectors()
    d_orig = float(np.linalg.norm(vin[a] - vin[b]))
    claim, delta = g.effective_epsilon * d_orig, g.delta
    xa, xb = mech.inputs[a], mech.inputs[b]
    if hasattr(mech, "metric_distance"):
        space = mech.epsilon * float(mech.metric_distance(xa, xb)[0])
    else:
        space = mech.epsilon / float(getattr(mech, "scale_factor", 1.0)) * float(
            np.linalg.norm(xa - xb))
    if g.proven and space <= claim:
        claim, delta = space, 0.0
    elif not g.proven:  # an estimated bound: the exact claim in the mechanism's space is what holds
        claim, delta = space, 0.0
    return claim, delta


def choose_pairs(privatizer: Privatizer, n_per_kind: int, rng: np.random.Generator,
                 n_frequent: int = 20) -> list[tuple[str, int, int]]:
    """Word pairs (kind, a, b): nearest, random, far and frequent pairs of the vocabulary.

    With a scope (``custext``), partners are drawn from the first word's own scope.
    """
    emb = privatizer.embedding
    x = emb.vectors
    n = emb.size
    mech = privatizer.mechanism
    scoped = hasattr(mech, "same_scope")
    out: list[tuple[str, int, int]] = []
    firsts = rng.choice(n, size=min(3 * n_per_kind, n), replace=False)
    for kind in ("nearest", "random", "far", "frequent"):
        for i in range(n_per_kind):
            a = int(rng.integers(min(n_frequent, n))) if kind == "frequent" else int(
                firsts[(("nearest", "random", "far").index(kind) * n_per_kind + i) % len(firsts)])
            cand = np.arange(n)
            if scoped:
                cand = cand[mech.same_scope(np.full(n, a), cand)]
            elif kind == "frequent":
                cand = np.arange(min(n_frequent, n))
            cand = cand[cand != a]
            if len(cand) == 0:
                continue
            d = np.linalg.norm(x[cand] - x[a], axis=1)
            if kind == "nearest":
                b = int(cand[np.argmin(d)])
            elif kind == "far":
                b = int(cand[np.argmax(d)])
            else:
                b = int(rng.choice(cand))
            out.append((kind, a, b))
    return out


def check_settings(*, pairs: int, draws: int, confidence: float) -> None:
    """Raise ``ValueError`` for audit settings no audit can run with (:func:`run_audit`)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"audit: confidence must be in (0, 1), got {confidence!r}")
    if int(draws) < 100 or int(pairs) < 1:
        raise ValueError("audit: draws must be >= 100 and pairs >= 1")


def audit_privatizer(mechanism: str, epsilon: float, *, params: dict | None = None,
                     sensitivity: str = "none", sensitivity_params: dict | None = None,
                     vocab_size: int = 10_000, embedding: Embedding | str | None = None,
                     seed: int = 0, oov: str = "unk") -> Privatizer:
    """The privatizer :func:`run_audit` audits: the mechanism's natural mapping
    (:data:`bench.mapping.NATURAL_MAPPING`: ``nearest`` for an additive mechanism, ``none`` for
    a selection one) over ``embedding`` (default: the first ``vocab_size`` GloVe 6B 50d words).
    A bad configuration raises ``ValueError`` (or :class:`bench.registry.UnknownNameError` for
    a name)."""
    emb = embedding if isinstance(embedding, Embedding) else load_embedding(
        embedding or DEFAULT_EMBEDDING, vocab_size)
    return Privatizer.build(mechanism=mechanism, epsilon=epsilon, sensitivity=sensitivity,
                            mapping=None, seed=seed,
                            embedding=emb, oov=oov, mechanism_params=params or {},
                            sensitivity_params=sensitivity_params)


def run_audit(
    mechanism: str,
    epsilon: float,
    *,
    params: dict | None = None,
    sensitivity: str = "none",
    sensitivity_params: dict | None = None,
    vocab_size: int = 10_000,
    pairs: int = 2,
    draws: int = 200_000,
    joint_calls: int = 2_000,
    confidence: float = 0.95,
    seed: int = 0,
    oov: str = "unk",
    embedding: Embedding | str | None = None,
    privatizer: Privatizer | None = None,
    checks: tuple[str, ...] = ("words", "vectors", "joint", "oov"),
) -> AuditReport:
    """Audit one mechanism configuration (see the module docstring).

    Args:
        mechanism: registered mechanism name.
        epsilon: ε.
        params: mechanism parameters.
        sensitivity: sensitivity approach name; ``sensitivity_params`` its parameters.
        vocab_size: public vocabulary = the first ``vocab_size`` GloVe 6B 50d words.
        pairs: pairs per category (nearest, random, far, frequent).
        draws: mechanism runs per input word of each pair (half select events, half test).
        joint_calls: two-token calls per input pair for the independence check.
        confidence: 1 − α, the family-wise confidence of the whole report.
        seed: seeds the mechanism and the pair choice.
        oov: the Privatizer's OOV policy (``keep`` leaks and is caught).
        embedding: an :class:`Embedding` (e.g. a small synthetic one) instead of GloVe.
        privatizer: audit this already built Privatizer instead (e.g. a broken variant).
        checks: which checks to run.

    Returns:
        An :class:`AuditReport`; ``report.violations`` lists the rows exceeding the claim.
    """
    check_settings(pairs=pairs, draws=draws, confidence=confidence)
    kind = (privatizer.mechanism.kind if privatizer is not None
            else MECHANISMS.get(mechanism).kind)
    if kind == "document":
        raise InputError(
            f"bench audit checks the output distribution of single words; {mechanism!r} writes "
            f"whole documents (a paraphrase), whose distribution over texts cannot be "
            f"estimated by sampling. Its per-token sampler (clipped softmax, ε-LDP per token) "
            f"is checked against its exact distribution in tests/mechanisms/test_dp_prompt.py")
    t0 = time.perf_counter()
    p = privatizer or audit_privatizer(mechanism, epsilon, params=params, sensitivity=sensitivity,
                                       sensitivity_params=sensitivity_params,
                                       vocab_size=vocab_size, embedding=embedding, seed=seed,
                                       oov=oov)
    rng = np.random.default_rng([seed, 7])
    chosen = choose_pairs(p, int(pairs), rng)
    table = _Rows(p)
    half = int(draws) // 2
    cands = _pair_events(p, chosen, checks, half, table)
    if "joint" in checks:
        cands += _joint_events(p, chosen, joint_calls, table)
    mech = p.mechanism
    if "oov" in checks and p.mapping.outputs_text or "oov" in checks and mech.kind == "selection":
        cands += _oov_check(p, half, table.add)
    n_tests = _test_events(cands, table, confidence)
    return _audit_report(p, table.rows, 2 * half, confidence, n_tests, t0)


class _Rows:
    """The audit's rows and each row's δ, filled as the checks run (events name their row by
    its index)."""

    def __init__(self, p: Privatizer):
        self.words = p.embedding.words
        self.vin = p.embedding.input_vectors()
        self.rows: list[AuditRow] = []
        self.deltas: list[float] = []

    def add(self, check, kind, a, b, claim, delta) -> int:
        """A new row for the pair (a, b), PASS until an event says otherwise; its index."""
        words, vin = self.words, self.vin
        self.rows.append(AuditRow(check, kind, (words[a] if a < len(words) else "<unk>",
                                                words[b] if b < len(words) else "<unk>"),
                                  float(np.linalg.norm(vin[a] - vin[b])), claim, -math.inf,
                                  "PASS", "no event observed"))
        self.deltas.append(delta)
        return len(self.rows) - 1


def _pair_events(p: Privatizer, chosen, checks, half: int, table: _Rows) -> list[Candidate]:
    """The "words" and "vectors" checks of every chosen pair with a finite claim."""
    mech = p.mechanism
    cands: list[Candidate] = []
    for kind, a, b in chosen:
        claim, delta = pair_claim(p, a, b)
        if not math.isfinite(claim):
            continue
        if "words" in checks:
            # after a nearest mapping each draw costs a search over |W|: capped
            hw = half if mech.kind == "selection" else min(half, MAPPED_DRAWS // 2)
            ya, _ = p.privatize_ids(np.full(2 * hw, a))
            yb, _ = p.privatize_ids(np.full(2 * hw, b))
            if ya is not None:
                r = table.add("words", kind, a, b, claim, delta)
                cands += discrete_events(ya[:hw], yb[:hw], ya[hw:], yb[hw:], claim, r, "y")
        if "vectors" in checks and mech.kind == "additive":
            cands += _vector_events(p, kind, a, b, claim, delta, half, table)
    return cands


def _vector_events(p: Privatizer, kind, a: int, b: int, claim: float, delta: float, half: int,
                   table: _Rows) -> list[Candidate]:
    """Tail events of the projection onto x′ − x and of the distance difference, on the
    additive mechanism's output vectors (before the mapping)."""
    mech = p.mechanism
    za, zb = mech.perturb(np.full(2 * half, a)), mech.perturb(np.full(2 * half, b))
    xa, xb = mech.prepare(mech.inputs[[a]])[0], mech.prepare(mech.inputs[[b]])[0]
    v = (xb - xa) / max(np.linalg.norm(xb - xa), 1e-300)
    r = table.add("vectors", kind, a, b, claim, delta)
    cands: list[Candidate] = []
    for label, f in (("proj", lambda z: (z - xa) @ v),
                     ("ddist", lambda z: np.linalg.norm(z - xb, axis=1)
                      - np.linalg.norm(z - xa, axis=1))):
        ta, tb = f(za), f(zb)
        cands += tail_events(ta[:half], tb[:half], ta[half:], tb[half:], r, label)
    return cands


def _joint_events(p: Privatizer, chosen, joint_calls: int, table: _Rows) -> list[Candidate]:
    """The independence check on the first nearest pair (or the first pair): two-token calls
    [w, w] vs [w, w′]."""
    mech = p.mechanism
    cands: list[Candidate] = []
    near = [(k, a, b) for k, a, b in chosen if k == "nearest"] or chosen[:1]
    for kind, a, b in near[:1]:
        claim, delta = pair_claim(p, a, b)  # composition: d(w, w) + d(w, w′) = d(w, w′)
        if not math.isfinite(claim):
            continue
        r = table.add("joint", kind, a, b, claim, delta)
        n_calls = 2 * (int(joint_calls) // 2)
        v = mech.inputs[b] - mech.inputs[a]
        ja, jb = _joint_outputs(p, a, a, n_calls, v), _joint_outputs(p, a, b, n_calls, v)
        h = n_calls // 2
        if ja.dtype.kind == "f":
            cands += tail_events(ja[:h], jb[:h], ja[h:], jb[h:], r, "diff")
        else:
            cands += discrete_events(ja[:h], jb[:h], ja[h:], jb[h:], claim, r, "pair")
    return cands


def _test_events(cands: list[Candidate], table: _Rows, confidence: float) -> int:
    """Test every event on its test half at level α/M (Bonferroni over all M events); each
    row keeps its largest lower bound and its evidence, then gets its status. Returns M."""
    rows, deltas = table.rows, table.deltas
    n_tests = max(len(cands), 1)
    alpha = (1.0 - confidence) / n_tests / 2.0  # each event: two one-sided intervals
    for c in cands:
        num, den = (c.in_a, c.in_b) if c.forward else (c.in_b, c.in_a)
        n_t = len(num)
        lo = float(cp_lower(int(num.sum()), n_t, alpha))
        hi = float(cp_upper(int(den.sum()), len(den), alpha))
        if c.b_impossible and not den.any():
            hi = 0.0
        row = rows[c.row]
        lo_d = lo - deltas[c.row]
        bound = (math.log(lo_d / hi) if hi > 0 else math.inf) if lo_d > 0 else -math.inf
        row.n_events += 1
        if bound > row.lower_bound:
            row.lower_bound = bound
            direction = "P(w)/P(w')" if c.forward else "P(w')/P(w)"
            row.evidence = (f"{c.name}: {direction} counts {int(num.sum())}/{n_t} vs "
                            f"{int(den.sum())}/{len(den)}")
    for row in rows:
        row.status = "VIOLATION" if row.lower_bound > row.claimed else "PASS"
    return n_tests


def _audit_report(p: Privatizer, rows: list[AuditRow], draws: int, confidence: float,
                  n_tests: int, t0: float) -> AuditReport:
    """The report of the tested rows, with its scope and OOV notes (``t0``: when the audit
    began)."""
    mech = p.mechanism
    notes: list[str] = []
    if hasattr(mech, "same_scope"):
        notes.append("scope: pairs are drawn within one output set; words of different sets "
                     "have disjoint outputs and the claim does not cover them")
    if p.oov == "keep":
        notes.append("oov policy 'keep': out-of-vocabulary words pass through (no guarantee)")
    g = p.guarantee()
    report = AuditReport(mechanism=mech.name, epsilon=mech.epsilon, params=dict(mech.params),
                         sensitivity=p.sensitivity.name, guarantee=g.describe(),
                         vocab_size=p.embedding.size, draws=draws, confidence=confidence,
                         n_tests=n_tests, rows=rows, seconds=time.perf_counter() - t0,
                         notes=notes)
    logger.info("audit %s: %s in %.1fs", report.key, "PASS" if report.passed else "VIOLATION",
                report.seconds)
    return report


def _joint_outputs(p: Privatizer, a: int, b: int, n_calls: int, v: np.ndarray) -> np.ndarray:
    """Outputs of ``n_calls`` separate two-token calls on [a, b].

    Additive mechanisms: (z₂ − z₁)·v for a direction v fixed by the caller (the same for both
    input pairs; a shared noise vector makes it deterministic); selection: the output pair
    encoded as one integer. Each call is one two-token document, batched as the privatizer
    batches a corpus (:meth:`~bench.privatize.Privatizer.noise_batches`: a mechanism that
    shares noise per batch of sentences shares it here).
    """
    mech = p.mechanism
    ids = np.array([a, b])
    if mech.kind == "additive":
        batches = p.noise_batches(np.array([2]))
        out = np.empty(n_calls)
        for i in range(n_calls):  # separate calls: the independence rule is per call
            z = mech.perturb(ids, batches)
            out[i] = (z[1] - z[0]) @ v
        return out
    n = p.embedding.size
    out = np.empty(n_calls, dtype=np.int64)
    for i in range(n_calls):
        y, _ = p.privatize_ids(ids)
        out[i] = y[0] * n + y[1]
    return out


def _oov_check(p: Privatizer, half: int, add_row) -> list[Candidate]:
    """An OOV token must never come back: compare it with the vocabulary word nearest <unk>."""
    emb = p.embedding
    unk = emb.input_vectors()[emb.size]
    w = int(np.argmin(np.linalg.norm(emb.vectors - unk, axis=1)))
    claim, delta = pair_claim(p, emb.unk_id, w)
    n = min(half, 20_000)
    out_o = p.privatize([[OOV_PROBE] * (2 * n)]).tokens[0]
    out_w = p.privatize([[emb.words[w]] * (2 * n)]).tokens[0]
    r = add_row("oov", "oov", emb.unk_id, w, claim, delta)
    p_rows = np.array([t == OOV_PROBE for t in out_o])
    w_rows = np.array([t == OOV_PROBE for t in out_w])
    # a vocabulary word's input only ever produces vocabulary words (output ids index W), so
    # P(M(w) = the OOV token) = 0 exactly: one pass-through is an unbounded privacy loss
    return [Candidate(r, f"output == {OOV_PROBE!r}", True, p_rows[n:], w_rows[n:],
                       b_impossible=OOV_PROBE not in emb.word_to_id)]


def cli_audit(
    mechanism: str,
    epsilon: float,
    *,
    params: dict | None = None,
    sensitivity: str = "none",
    vocab_size: int = 10_000,
    pairs: int = 2,
    draws: int = 200_000,
    confidence: float = 0.95,
    seed: int = 0,
    oov: str = "unk",
    results_dir: str | Path | None = "results/audit",
    privatizer: Privatizer | None = None,
) -> tuple[str, int]:
    """``bench audit``: run, write the status file, return (printed text, exit code).

    Exit code 0 on PASS, 1 on a VIOLATION. Bad arguments raise ``ValueError``; ``bench audit``
    checks them first (:func:`check_settings`, :func:`audit_privatizer`, whose ``privatizer``
    it passes in), so that only they are reported as bad input (exit code 2).
    """
    report = run_audit(mechanism, epsilon, params=params, sensitivity=sensitivity,
                       vocab_size=vocab_size, pairs=pairs, draws=draws, confidence=confidence,
                       seed=seed, oov=oov, privatizer=privatizer)
    text = report.table()
    if results_dir is not None:
        text += f"status written to {write_audit_status(report, results_dir)}\n"
    return text, 0 if report.passed else 1
