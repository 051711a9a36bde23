"""Speed benchmark (``bench perf``) and the demo main job (``bench demo``).

``bench perf`` privatizes real text (BBC News tokens, GloVe 6B 50d, |W| = 50,000 by default)
with every mechanism and prints tokens/s of the privatization itself (fitting, which happens
once per vocabulary, is timed separately) next to the targets of the foundation issue. It is a
benchmark, not a test: numbers depend on the machine.

Example:
    $ bench perf --tokens 20000
"""

from __future__ import annotations

import time


from bench.embeddings import load_embedding, tokenize

# (mechanism, mapping, epsilon, params, target tokens/s on the 2-core reference machine)
PERF_CONFIGS: list[tuple[str, str, float, dict, float | None]] = [
    ("mvl", "nearest", 10.0, {}, 10_000),
    ("mvl", "vickrey", 10.0, {}, None),
    ("laplace", "nearest", 10.0, {"C": 1.0}, None),
    ("gaussian", "nearest", 1.0, {"C": 1.0}, None),
    ("trlaplace", "nearest", 1.0, {"C": 1.0}, None),
    ("tem", "none", 10.0, {}, 100_000),
    # undefined below eps ~ 75.8 at |W| = 50,000 (see the mechanism's docstring)
    ("truncated_gumbel", "none", 100.0, {}, 100_000),
]


def corpus_tokens(n_tokens: int) -> list[list[str]]:
    """The first ``n_tokens`` tokens of BBC News (public text), as documents."""
    from bench.datasets import load_dataset

    docs, total = [], 0
    for text in load_dataset("bbc").texts:
        toks = tokenize(text)
        docs.append(toks[: n_tokens - total])
        total += len(docs[-1])
        if total >= n_tokens:
            break
    return docs


def run_perf(vocab_size: int = 50_000, n_tokens: int = 20_000,
             mechanisms: list[str] | None = None) -> str:
    """Time every configuration; returns the printed table."""
    from bench.privatize import Privatizer

    emb = load_embedding("glove-6b-50d", vocab_size)
    docs = corpus_tokens(n_tokens)
    n = sum(len(d) for d in docs)
    rows = [("mechanism", "mapping", "eps", "fit s", "tokens/s", "N_w", "target", "")]
    for name, mapping, eps, params, target in PERF_CONFIGS:
        if mechanisms and name not in mechanisms:
            continue
        t0 = time.perf_counter()
        p = Privatizer.build(mechanism=name, epsilon=eps, mapping=mapping, seed=0,
                             embedding=emb, mechanism_params=params)
        fit = time.perf_counter() - t0
        p.privatize(docs[:5])  # warm-up
        out = p.privatize(docs)
        tps = n / out.seconds
        ok = "" if target is None else ("ok" if tps >= target else "BELOW TARGET")
        rows.append((name, mapping, f"{eps:g}", f"{fit:.2f}", f"{tps:,.0f}",
                     f"{out.n_w:.3f}", "" if target is None else f"{target:,}", ok))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    head = f"bench perf: {n:,} BBC tokens, glove-6b-50d |W|={vocab_size:,}, d={emb.dim}\n"
    return head + "\n".join(lines) + "\n"


def run_demo(n_docs: int = 200) -> str:
    """Privatize BBC News documents with every mechanism at two ε; report N_w and guarantees."""
    from bench.datasets import load_dataset
    from bench.privatize import Privatizer

    emb = load_embedding("glove-6b-50d", 50_000)
    texts = load_dataset("bbc").texts[:n_docs]
    docs = [tokenize(t) for t in texts]
    n = sum(len(d) for d in docs)
    example = " ".join(docs[0][:16])
    out = [f"bench demo: {n_docs} BBC News documents ({n:,} tokens), glove-6b-50d |W|=50,000",
           f"original : {example}", ""]
    rows = [("mechanism", "mapping", "eps", "N_w", "tokens/s", "guarantee")]
    examples = []
    configs = [("mvl", "nearest", {}), ("laplace", "nearest", {}), ("trlaplace", "nearest", {}),
               ("tem", "none", {}), ("truncated_gumbel", "none", {})]
    for name, mapping, params in configs:
        for eps in ((100.0, 150.0) if name == "truncated_gumbel" else (1.0, 10.0)):
            p = Privatizer.build(mechanism=name, epsilon=eps, mapping=mapping, seed=0,
                                 embedding=emb, mechanism_params=params)
            res = p.privatize(docs)
            rows.append((name, mapping, f"{eps:g}", f"{res.n_w:.3f}",
                         f"{res.n_tokens / res.seconds:,.0f}", p.guarantee().describe()))
            examples.append(f"{name} eps={eps:g}: " + " ".join(res.tokens[0][:16]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out += [""] + examples
    return "\n".join(out) + "\n"


