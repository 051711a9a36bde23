"""Attacks on privatized corpora: the attribute adversary and membership inference.

* :func:`attribute_adversary` -- train any registered model on the privatized training split
  to predict a private attribute; empirical privacy = 1 - its macro-F1 (Riecker 2023, Sec. 4.2).
* :func:`membership_inference` -- TEM's shadow-model membership-inference attack (Carvalho et
  al. 2021, Sec. 5.3) and the loss-threshold attack (Yeom et al. 2018): each attack's AUC with
  a 95% bootstrap interval on members vs non-members; :func:`mia_validity` says whether the
  unprivatized baseline's strongest attack is clearly above chance.

Example:
    >>> from bench.attacks import attribute_adversary, membership_inference
    >>> adv = attribute_adversary("bow", X_train, a_train, X_test, a_test, seed=0)
    >>> mia = membership_inference("bow", X_mem, y_mem, X_non, y_non, X_sh, y_sh, seed=0)
    >>> adv.privacy, mia.auc
"""

from bench.attacks.adversary import AdversaryResult, attribute_adversary
from bench.attacks.membership import (
    ATTACKS,
    FEATURES,
    MEMORISING_PARAMS,
    MIAResult,
    attack_features,
    auc_with_ci,
    example_loss,
    loss_threshold_attack,
    membership_inference,
    mia_validity,
)

__all__ = [
    "ATTACKS",
    "FEATURES",
    "MEMORISING_PARAMS",
    "AdversaryResult",
    "MIAResult",
    "attack_features",
    "attribute_adversary",
    "auc_with_ci",
    "example_loss",
    "loss_threshold_attack",
    "membership_inference",
    "mia_validity",
]
