"""Attacks on privatized corpora: the attribute adversary and membership inference.

* :func:`attribute_adversary` -- train any registered model on the privatized training split
  to predict a private attribute; empirical privacy = 1 - its macro-F1 (Riecker 2023, Sec. 4.2).
* :func:`membership_inference` -- TEM's shadow-model membership-inference attack (Carvalho et
  al. 2021, Sec. 5.3): attack AUC and accuracy on members vs non-members.

Example:
    >>> from bench.attacks import attribute_adversary, membership_inference
    >>> adv = attribute_adversary("bow", X_train, a_train, X_test, a_test, seed=0)
    >>> mia = membership_inference("bow", X_mem, y_mem, X_non, y_non, X_sh, y_sh, seed=0)
    >>> adv.privacy, mia.auc
"""

from bench.attacks.adversary import AdversaryResult, attribute_adversary
from bench.attacks.membership import FEATURES, MIAResult, attack_features, membership_inference

__all__ = [
    "FEATURES",
    "AdversaryResult",
    "MIAResult",
    "attack_features",
    "attribute_adversary",
    "membership_inference",
]
