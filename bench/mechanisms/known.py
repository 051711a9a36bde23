"""Known-answer mechanisms: the two ends of every scale, shipped so each board shows them.

* ``identity`` — the output is the input, every token unchanged (out-of-vocabulary words too).
  No privacy: it gains none, and its anchored trade-off and leaderboard score are 0
  (:mod:`bench.analysis.anchored`). ε plays no part; its cells carry ε = ∞, like the
  unprivatized baseline, which it reproduces through the privatization pipeline.
* ``no_information`` — every token replaced by an independent uniform draw from the public
  vocabulary, P(o | w) = 1/|W| for every input w: the output carries no information about the
  input, retains no utility, and scores 0. It is ε-DP for every ε ≥ 0 (the output distribution
  does not depend on the input, Dwork & Roth 2014, Def. 2.4 with ε = 0); its cells carry ε = 0.
* ``constant`` — every token replaced by one fixed word, the public vocabulary's first (most
  frequent) word: no information either, deterministically (0-DP), the plugin the leaderboard
  issue found scoring a third of tem's under the old score.

A known-answer mechanism takes no parameters; the ε it is constructed with is ignored and the
grid expander gives it one cell per dataset × model × seed (sensitivity ``none``, mapping
``none``, its own ε: :attr:`KnownAnswer.cell_epsilon`), whatever the grid's ε, sensitivity and
mapping axes hold.

Example:
    >>> mech = MECHANISMS.create("no_information", epsilon=1.0, rng=0).fit(space)
    >>> mech.sample(np.array([3, 3, 7]))  # three independent uniform draws
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, SelectionMechanism, as_generator
from bench.mechanisms.channels import TableChannel


class KnownAnswer(SelectionMechanism):
    """Base of the known-answer mechanisms (see the module docstring)."""

    known_answer: str = ""
    """``"privacy"``: the privacy-0 end (the output is the input); ``"utility"``: the
    utility-0 end (the output carries no information about the input)."""
    cell_epsilon: float = math.inf
    """The ε its cells carry (the grid's ε axis does not apply)."""
    passes_input: bool = False
    """Whether the privatizer returns the input tokens unchanged (out-of-vocabulary ones too)
    instead of sampling (:meth:`bench.privatize.Privatizer.privatize`)."""

    def __init__(self, *, epsilon: float = math.inf, rng: Any = None) -> None:
        # ε is not a parameter of a known answer: any value (even 0 or ∞) is accepted, ignored
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating,
                                                                 np.integer)) \
                or math.isnan(float(epsilon)) or float(epsilon) < 0:
            raise ValueError(f"{self.name}: epsilon must be a number >= 0 (it is ignored), "
                             f"got {epsilon!r}")
        self.epsilon = self.cell_epsilon
        self.rng = as_generator(rng)
        self.space = None
        self.inputs = None
        self.params = {}


@MECHANISMS.register()
class Identity(KnownAnswer):
    """The output is the input (see the module docstring): no privacy guarantee.

    The privacy-0 end of every scale: ε-DP holds for no finite ε (Dwork & Roth 2014,
    Def. 2.4: two inputs that differ give disjoint outputs)."""

    name = "identity"
    # 2: the informed adversary reads its output as the baseline's (every vocabulary word the
    #    token itself); through its exact channel over the most frequent candidates only, it
    #    found less than on the baseline and identity showed a privacy gain (debates2016)
    version = "2"
    description = "known answer: the output is the input (no privacy; scores 0)"
    guarantee_kind = "none"
    known_answer = "privacy"
    cell_epsilon = math.inf
    passes_input = True

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """Each vocabulary word maps to itself. (The privatizer never calls this for text: it
        passes the tokens through, out-of-vocabulary ones included; an ``<unk>`` input id has
        no vocabulary word and is refused here.)"""
        ids = self._lookup(ids)
        if ids.size and ids.max() >= self.space.shape[0]:
            raise ValueError("identity: an input id outside the vocabulary has no output word")
        return ids.copy()

    def channel(self, words: np.ndarray) -> TableChannel:
        """The exact channel: all mass on the input word itself (floor 0; see
        :meth:`Mechanism.channel`)."""
        self._check_fitted()
        k = len(words)
        table = sparse.csc_matrix((np.ones(k), (np.arange(k), np.asarray(words, np.int64))),
                                  shape=(k, self.space.shape[0]))
        return TableChannel(words, self.space.shape[0], table, 0.0, "exact")

    def guarantee(self, sensitivity=None) -> Guarantee:
        """None: the input is published."""
        return Guarantee("none", math.inf)


@MECHANISMS.register()
class NoInformation(KnownAnswer):
    """Every token an independent uniform draw from the public vocabulary.

    P(o | w) = 1/|W| for every input w, so P(o | w) = P(o | w′) and the mechanism is ε-DP for
    ε = 0 (Dwork & Roth 2014, Def. 2.4): the utility-0 end of every scale."""

    name = "no_information"
    version = "1"
    description = "known answer: every word replaced by a uniform draw from the vocabulary " \
                  "(no information; scores 0)"
    guarantee_kind = "pure"
    known_answer = "utility"
    cell_epsilon = 0.0

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions, one row per input id: uniform over the |W| words."""
        ids = self._lookup(ids)
        n = self.space.shape[0]
        return np.full((len(ids), n), 1.0 / n)

    def channel(self, words: np.ndarray) -> TableChannel:
        """The exact channel P(o | w) = 1/|W|: a floor with no excess (see
        :meth:`Mechanism.channel`)."""
        self._check_fitted()
        n = self.space.shape[0]
        empty = sparse.csc_matrix((len(words), n), dtype=np.float64)
        return TableChannel(words, n, empty, 1.0 / n, "exact")

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One independent uniform draw per occurrence, whatever the input."""
        ids = self._lookup(ids)
        return self.rng.integers(0, self.space.shape[0], size=len(ids), dtype=np.int64)

    def guarantee(self, sensitivity=None) -> Guarantee:
        """0-DP: the output distribution does not depend on the input."""
        return Guarantee("pure", 0.0)


@MECHANISMS.register()
class Constant(KnownAnswer):
    """Every token replaced by the public vocabulary's first (most frequent) word.

    A constant output is 0-DP (Dwork & Roth 2014, Def. 2.4); the utility-0 end of every scale,
    reached deterministically."""

    name = "constant"
    version = "1"
    description = "known answer: every word replaced by one fixed word (no information; " \
                  "scores 0)"
    guarantee_kind = "pure"
    known_answer = "utility"
    cell_epsilon = 0.0

    def channel(self, words: np.ndarray) -> TableChannel:
        """The exact channel: all mass on word 0 (a one-column table, floor 0; see
        :meth:`Mechanism.channel`)."""
        self._check_fitted()
        k = len(words)
        table = sparse.csc_matrix((np.ones(k), (np.arange(k), np.zeros(k, dtype=np.int64))),
                                  shape=(k, self.space.shape[0]))
        return TableChannel(words, self.space.shape[0], table, 0.0, "exact")

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """Word 0 for every occurrence."""
        ids = self._lookup(ids)
        return np.zeros(len(ids), dtype=np.int64)

    def guarantee(self, sensitivity=None) -> Guarantee:
        """0-DP: the output does not depend on the input."""
        return Guarantee("pure", 0.0)


KNOWN_EPSILON: dict[str, float] = {c.name: c.cell_epsilon for c in (Identity, NoInformation,
                                                                      Constant)}
"""The ε each known answer's cells carry (the results reader accepts no other)."""


def stored_epsilon(name: str) -> float | str | None:
    """How a known answer's cells store their ε in ``spec.json`` (``"inf"`` for ∞), the one
    value the results reader and the spec check accept; None: not a known answer."""
    eps = KNOWN_EPSILON.get(name)
    if eps is None:
        return None
    return "inf" if math.isinf(eps) else eps
