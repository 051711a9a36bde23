"""DP-Prompt (Utpala et al. 2023): the per-token sampler is the exact clipped softmax at
T = 2(b₂ − b₁)/ε, ε-LDP for any two logit vectors, sampled faithfully; the paraphrase is
seeded, follows its document at a large ε and loses it at a small one; in a grid the per-token
measures and the informed adversary say why they do not apply."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats

from bench.grid import load_grid
from bench.measures import measure
from bench.mechanisms import MECHANISMS
from bench.mechanisms.dp_prompt import clipped_distribution, draw, prompt_ids
from bench.run.runner import run_grid


def test_the_sampler_is_the_clipped_softmax_at_the_papers_temperature():
    m = MECHANISMS.create("dp_prompt", epsilon=40.0, clip_min=-2.0, clip_max=6.0)
    assert m.temperature == 2 * 8.0 / 40.0
    u = np.array([-9.0, -2.0, 0.0, 3.0, 6.0, 30.0])
    z = np.clip(u, -2.0, 6.0) / m.temperature
    want = np.exp(z) / np.exp(z).sum()
    assert np.allclose(clipped_distribution(u, 40.0, -2.0, 6.0), want, rtol=1e-12)


@pytest.mark.parametrize("eps", [0.5, 4.0, 40.0])
def test_one_token_is_eps_ldp_for_any_two_documents(eps):
    """For any two logit vectors (two documents, or two prefixes), every token's probability
    ratio is within e^ε (Utpala et al. 2023, Thm. 1) -- at the extremes too."""
    rng = np.random.default_rng(0)
    u = rng.normal(5, 10, size=(200, 2000))
    u[:5] = np.where(rng.random((5, 2000)) < 0.5, -1e3, 1e3)  # far outside the bounds
    u[5], u[6] = -1e3, 1e3      # the worst pair: token 0 at the top of one and the bottom of
    u[5, 0], u[6, 0] = 1e3, -1e3  # the other, every other token the other way round
    logp = np.log(clipped_distribution(u, eps, 5.0, 21.0))
    worst = (logp.max(axis=0) - logp.min(axis=0)).max()
    assert worst <= eps + 1e-9
    if eps < 1:  # where 1999 other tokens outweigh e^(ε/2), the bound is nearly reached
        assert worst > 0.9 * eps


def test_draws_follow_the_exact_distribution():
    p = clipped_distribution(np.array([1.0, 4.0, 8.0, 12.0, 20.0, 25.0]), 8.0, 5.0, 21.0)
    rng = np.random.default_rng(1)
    counts = np.bincount([draw(p, rng) for _ in range(40_000)], minlength=len(p))
    assert stats.chisquare(counts, 40_000 * p).pvalue > 0.001


def test_the_guarantee_composes_over_the_generated_tokens():
    m = MECHANISMS.create("dp_prompt", epsilon=2.0, max_new_tokens=32)
    g = m.guarantee()
    assert (g.kind, g.epsilon, g.multiplier, g.effective_epsilon) == ("pure", 2.0, 32.0, 64.0)


@pytest.mark.parametrize("kw, match", [
    ({"clip_min": 3.0, "clip_max": 3.0}, "clip_min must be below clip_max"),
    ({"clip_min": "a"}, "must be numbers"),
    ({"max_new_tokens": 0}, "max_new_tokens"),
    ({"max_new_tokens": 2.5}, "whole number"),
    ({"model": 3}, "local model folder"),
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": 1.5}, "whole number"),
])
def test_bad_parameters_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        MECHANISMS.create("dp_prompt", epsilon=1.0, **kw)


def _overlap(a: str, b: str) -> float:
    wa, wb = set(re.findall(r"[a-z]+", a.lower())), set(re.findall(r"[a-z]+", b.lower()))
    return len(wa & wb) / max(len(wa), 1)


DOCS = ["the central bank raised interest rates for the third time this year to slow "
        "rising prices", "the football club signed a young striker from spain for a record fee"]


def test_a_paraphrase_follows_its_document_at_large_eps_and_not_at_small(lm):
    def run(eps, seed):
        m = MECHANISMS.create("dp_prompt", epsilon=eps, rng=seed, max_new_tokens=20)
        return m.paraphrase(DOCS)

    high = run(1000.0, 0)
    assert run(1000.0, 0) == high          # seeded: the same stream, the same text
    low = run(0.5, 0)
    follows = np.mean([_overlap(h, d) for h, d in zip(high, DOCS, strict=True)])
    lost = np.mean([_overlap(x, d) for x, d in zip(low, DOCS, strict=True)])
    assert follows > 0.2 and lost < 0.1 and follows > lost + 0.15, (high, low)


def test_a_document_in_a_padded_batch_gets_the_distribution_it_gets_alone(lm):
    """Batched generation (version 2): left padding, the mask and each document's own positions
    leave its next-token distribution as it is alone (up to float rounding), at the first step
    and after a token of its own -- while a document's distribution is not its neighbour's."""
    import torch

    m = MECHANISMS.create("dp_prompt", epsilon=62.0, rng=0)
    docs = DOCS + ["thanks", "a much longer document about the weather in the north of the "
                   "country , where it rained for three days and the rivers rose"]
    prompts = [prompt_ids(lm.tokenizer, d, lm.start_id) for d in docs]
    assert len({len(p) for p in prompts}) == len(prompts)      # padding differs per row

    def dist(u):
        return clipped_distribution(u.double().numpy(), 62.0, m.clip_min, m.clip_max)

    with torch.no_grad():
        together, *_ = m.first_logits(lm, prompts, torch)
        alone = [m.first_logits(lm, [p], torch)[0][0] for p in prompts]
        nxt = [int(dist(u).argmax()) for u in alone]
        two_together, *_ = m.first_logits(lm, [p + [t] for p, t in zip(prompts, nxt)], torch)
        two_alone = [m.first_logits(lm, [p + [t]], torch)[0][0] for p, t in zip(prompts, nxt)]
    for i in range(len(docs)):
        assert not torch.isnan(together[i]).any()
        tv = 0.5 * np.abs(dist(together[i]) - dist(alone[i])).sum()
        tv2 = 0.5 * np.abs(dist(two_together[i]) - dist(two_alone[i])).sum()
        assert tv < 1e-3 and tv2 < 1e-3, (i, tv, tv2)
    other = 0.5 * np.abs(dist(together[0]) - dist(together[3])).sum()
    assert other > 0.05     # the check can fail: two documents' distributions do differ


def test_generation_continues_each_document_from_its_own_cache(lm):
    """At a huge ε the draw is the clipped argmax: a batch's paraphrases equal those made one
    document at a time (the cache and positions carry each document on its own)."""
    def run(batch_size):
        m = MECHANISMS.create("dp_prompt", epsilon=1e6, rng=0, max_new_tokens=12,
                              batch_size=batch_size)
        return m.paraphrase(DOCS + ["the minister said the talks would go on next week"])

    assert run(3) == run(1)


GRID = """
name: dpprompt
axes:
  dataset: [{name: bbc, subsample: 20, max_tokens: 20}]
  model: [bow]
  mechanism: [{name: dp_prompt, max_new_tokens: 6}]
  epsilon: [60]
  seed: [0]
settings:
  vocab_size: 3000
  baseline: false
  measures: [reconstruction, s_w, linkage]
"""


def test_in_a_grid_the_per_token_measures_and_the_informed_adversary_say_why_not(lm,
                                                                                tmp_path):
    (tmp_path / "g.yaml").write_text(GRID)
    assert run_grid(tmp_path / "g.yaml", results=tmp_path / "r",
                    mlflow=False).count("done") == 1
    m = json.loads(next((tmp_path / "r").glob("cells/*/metrics.json")).read_text())
    assert m["guarantee"]["multiplier"] == 6.0 and m["guarantee"]["kind"] == "pure"
    assert set(m["measures"]) == {"linkage"}     # a text measure runs; the per-token ones not
    assert m["privatization"]["seconds_per_document"] > 0     # its cost, per document
    cell = load_grid(tmp_path / "g.yaml").cells[0]
    for name in ("reconstruction", "s_w"):
        assert "document-level mechanism" in measure(name).skip(cell)
    assert "a document-level mechanism's text is not one" in json.dumps(m)  # informed: why not
