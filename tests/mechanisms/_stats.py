"""Shared statistics and helpers for the distribution tests of the mechanisms."""

import numpy as np
from scipy import stats

N = 20_000
# a sampler fails its test when the (chi-square or KS) p-value falls below this; the draws are
# seeded, so a correct sampler passes deterministically and a wrong one fails
P_MIN = 1e-3


def chi2_pvalue(samples, probs):
    """Pearson chi-square p-value of integer ``samples`` against the probabilities ``probs``.

    Categories expected fewer than 5 times are pooled into one cell (the test's validity rule).
    """
    counts = np.bincount(samples, minlength=len(probs))
    expected = probs / probs.sum() * len(samples)
    keep = expected > 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


def noise_of(mech, n=N):
    return mech.perturb(np.zeros(n, dtype=np.int64)) - mech.prepare(mech.inputs[[0]])


def pairwise(x):
    return np.linalg.norm(x[:, None] - x[None], axis=2)

