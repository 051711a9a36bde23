"""Shared statistics for the distribution tests of the mechanisms."""

import numpy as np
from scipy import stats

P_MIN = 1e-3  # a sampler fails its test when the chi-square p-value falls below this


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
