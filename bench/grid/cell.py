"""The :class:`Cell` record (one experiment, every axis resolved) and its identities.

:func:`cell_hash` names a cell's result folder; :func:`privatization_hash` names the privatized
corpus it shares with cells that differ only in the model or its settings.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePath
from typing import Any

from bench.grid.components import component_defaults, mechanism_kind
from bench.grid.frozen import FrozenDict, canonical_json, freeze, thaw
from bench.grid.schema import DATA_KEY, is_baseline

_HASH_HEX = 16

@dataclass(frozen=True)
class Cell:
    """One experiment: every axis resolved to concrete parameters.

    Component parameters are the component's own canonical parameters (defaults filled in by
    constructing it), so ``tem`` and ``{name: tem, beta: 0.001}`` are the same cell.
    """

    dataset: str
    """Registered dataset name."""
    dataset_config: FrozenDict
    """Dataset configuration as given in the grid (``path``, ``subsample``, ...); defaults and
    environment variables are resolved by the loader at run time."""
    model: str
    """Registered model name."""
    model_params: FrozenDict
    """Model hyperparameters: ``settings.models[model]`` overridden by the axis entry."""
    mechanism: str
    """Registered mechanism name, or ``"none"`` for the baseline."""
    mechanism_params: FrozenDict
    """Mechanism parameters (without ε and rng)."""
    sensitivity: str
    """Sensitivity approach name."""
    sensitivity_params: FrozenDict
    """Sensitivity approach parameters."""
    mapping: str
    """Mapping name (``none`` for selection mechanisms and vector output)."""
    mapping_params: FrozenDict
    """Mapping parameters."""
    epsilon: float
    """ε > 0, or ``math.inf`` for the baseline."""
    seed: int
    """Seed of the privatization noise and of model training."""
    settings: FrozenDict
    """The grid's settings for this cell (``models`` replaced by ``model_defaults``, the
    hyperparameters of this cell's model only, so other models' settings do not change it)."""
    versions: FrozenDict = field(default_factory=FrozenDict)
    """Component versions (``dataset``, ``model``, ``mechanism``, ``sensitivity``, ``mapping``,
    ``rewriter``) and ``adversaries``: the attribute adversaries of the cell as
    ``"name=version,..."``."""
    rewriter: str = "none"
    """Registered rewriter name (:mod:`bench.rewriters`), ``"none"`` for cells without one."""
    rewriter_params: FrozenDict = field(default_factory=FrozenDict)
    """Rewriter parameters, its training ``corpus`` included (so the hash covers it)."""

    # -- identity ----------------------------------------------------------------------------
    @property
    def is_baseline(self) -> bool:
        """Whether this is an unprivatized baseline cell (:func:`bench.grid.schema.is_baseline`)."""
        return is_baseline(self.mechanism)

    @property
    def has_rewriter(self) -> bool:
        """Whether a rewriter turns the privatized vectors into text."""
        return self.rewriter != "none"

    @property
    def word_for_word(self) -> bool:
        """Whether each output word is drawn for one input word alone (every mechanism but a
        document-level one: ``dp_prompt`` writes a paraphrase, ``dp_mlm`` draws each word from
        its context), so that a per-word channel P(o | w) exists."""
        return self.is_baseline or mechanism_kind(self.mechanism) != "document"

    @property
    def output(self) -> str:
        """What the privatization hands the model: ``"text"`` or ``"vectors"``."""
        if self.is_baseline or self.mapping != "none" or self.has_rewriter:
            return "text"
        return "vectors" if mechanism_kind(self.mechanism) == "additive" else "text"

    def spec(self) -> dict[str, Any]:
        """Canonical JSON-able description (the stored spec of the cell's result folder)."""
        v = self.versions
        return {
            "dataset": {"name": self.dataset, "config": thaw(self.dataset_config),
                        "version": v.get("dataset")},
            "model": {"name": self.model, "params": thaw(self.model_params),
                      "version": v.get("model")},
            "mechanism": {"name": self.mechanism, "params": thaw(self.mechanism_params),
                          "version": v.get("mechanism")},
            "sensitivity": {"name": self.sensitivity, "params": thaw(self.sensitivity_params),
                            "version": v.get("sensitivity")},
            "mapping": {"name": self.mapping, "params": thaw(self.mapping_params),
                        "version": v.get("mapping")},
            "epsilon": _eps_json(self.epsilon),
            "seed": self.seed,
            "settings": thaw(self.settings),
            # the attribute adversaries run on this cell, ``name=version`` (bench.attacks)
            "adversaries": v.get("adversaries"),
        } | ({"metrics": v["metrics"]} if v.get("metrics") is not None else {}) | (
            # the grid's measures that apply to the cell, ``name=version`` (bench.measures)
            {"measures": v["measures"]} if v.get("measures") is not None else {}) | (
            # only cells with a rewriter carry the key: every other cell keeps its hash
            {"rewriter": {"name": self.rewriter, "params": thaw(self.rewriter_params),
                          "version": v.get("rewriter")}} if self.has_rewriter else {})

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Cell:
        """Rebuild a cell from :meth:`spec` output (e.g. a stored spec)."""
        eps = spec["epsilon"]
        versions = {k: spec[k].get("version") for k in
                    ("dataset", "model", "mechanism", "sensitivity", "mapping")
                    if spec[k].get("version") is not None}
        for key in ("adversaries", "metrics", "measures"):
            if spec.get(key) is not None:
                versions[key] = spec[key]
        rw = spec.get("rewriter") or {"name": "none", "params": {}}
        if rw.get("version") is not None:
            versions["rewriter"] = rw["version"]
        return cls(
            dataset=spec["dataset"]["name"], dataset_config=freeze(spec["dataset"]["config"]),
            model=spec["model"]["name"], model_params=freeze(spec["model"]["params"]),
            mechanism=spec["mechanism"]["name"],
            mechanism_params=freeze(spec["mechanism"]["params"]),
            sensitivity=spec["sensitivity"]["name"],
            sensitivity_params=freeze(spec["sensitivity"]["params"]),
            mapping=spec["mapping"]["name"], mapping_params=freeze(spec["mapping"]["params"]),
            epsilon=math.inf if eps == "inf" else float(eps), seed=int(spec["seed"]),
            settings=freeze(spec["settings"]), versions=freeze(versions),
            rewriter=rw["name"], rewriter_params=freeze(rw["params"]))

    @property
    def hash(self) -> str:
        """:func:`cell_hash` without a dataset content hash (spec + pipeline version only)."""
        return cell_hash(self)

    @cached_property
    def _spec_json(self) -> str:
        """Canonical JSON of the hashed spec (computed once; the cell is immutable)."""
        return canonical_json(_hashable_spec(self))

    @property
    def privatization_key(self) -> str:
        """:func:`privatization_hash` without a dataset content hash."""
        return privatization_hash(self)

    @property
    def name(self) -> str:
        """Readable identity, e.g. ``bbc:model=lstm,mech=mvl,sens=none,map=nearest,eps=1,seed=0``.

        Parameters are shown where they differ from the component's defaults (model: from
        ``settings.models``); the dataset ``path`` is never shown, a file's base name is
        (``file=mine.csv``; its content digest, ``data``, is hashed but not shown). Use
        :attr:`hash` as the key.
        """
        cfg = {k: v for k, v in self.dataset_config.items() if k not in ("path", DATA_KEY)}
        if self.dataset_config.get("path") not in (None, ""):
            cfg["file"] = PurePath(str(self.dataset_config["path"])).name
        ds = self.dataset + _fmt_params(cfg)
        defaults = self.settings.get("model_defaults", {})
        model = self.model + _fmt_params({k: v for k, v in self.model_params.items()
                                          if defaults.get(k, _MISSING) != v})
        mech = _nondefault("mechanism", self.mechanism, self.mechanism_params)
        sens = _nondefault("sensitivity", self.sensitivity, self.sensitivity_params)
        mapping = _nondefault("mapping", self.mapping, self.mapping_params)
        parts = [
            f"model={model}",
            f"mech={self.mechanism}{mech}",
            f"sens={self.sensitivity}{sens}",
            f"map={self.mapping}{mapping}",
            f"eps={_fmt_value(self.epsilon)}",
            f"seed={self.seed}",
        ]
        if self.has_rewriter:
            rw = _nondefault("rewriter", self.rewriter, self.rewriter_params)
            parts.insert(4, f"rw={self.rewriter}{rw}")
        return f"{ds}:{','.join(parts)}"

    def model_kwargs(self) -> dict[str, Any]:
        """The model's hyperparameters as plain keyword arguments."""
        return thaw(self.model_params)

    def dataset_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`bench.datasets.load_dataset` (besides the name): the
        dataset config without the file's content digest (:data:`DATA_KEY`, checked by
        :func:`bench.run.inputs.dataset` before loading)."""
        return {k: v for k, v in thaw(self.dataset_config).items() if k != DATA_KEY}

    def __str__(self) -> str:
        return self.name


_MISSING = object()


def _eps_json(eps: float) -> float | str:
    return "inf" if math.isinf(eps) else float(eps)


def _hashable_spec(cell: Cell) -> dict[str, Any]:
    spec = cell.spec()
    # the file location is not the content: the dataset content hash covers the data
    spec["dataset"]["config"].pop("path", None)
    return spec


PIPELINE_VERSION = 1
"""Version of what a cell computes around its components: the order of its stages, the
splits they use, the bootstrap intervals, the validity rules and the deltas against the
baseline (:mod:`bench.run`). It is hashed into every cell in place of the suite version
(which it replaced in 0.4.0), so that a release that changes none of this and no component
leaves every cell hash as it was; a change to the pipeline bumps it, and then every cell."""


def _digest(payload: Any, dataset_hash: str | None, version: bytes | None = None) -> str:
    """sha256 (first 16 hex) of the payload, ``version`` (default: the pipeline version) and
    the dataset content hash."""
    h = hashlib.sha256()
    h.update((payload if isinstance(payload, str) else canonical_json(payload)).encode("utf-8"))
    h.update(b"\0" + (version or b"pipeline=" + str(PIPELINE_VERSION).encode("utf-8")))
    h.update(b"\0dataset=" + (dataset_hash or "").encode("utf-8"))
    return h.hexdigest()[:_HASH_HEX]


def cell_hash(cell: Cell, dataset_hash: str | None = None) -> str:
    """Identity of a cell's result: sha256 (first 16 hex) of its canonical spec.

    Hashed: the canonical JSON of :meth:`Cell.spec` (sorted keys; the dataset ``path`` left
    out; every component's name, parameters and version), :data:`PIPELINE_VERSION` and
    ``dataset_hash`` (the dataset's content hash,
    ``Dataset.content_hash()``). Without ``dataset_hash`` (``Cell.hash``) the dataset is
    identified by name, config and loader version only — cheap, and what ``bench validate``
    shows; the runner passes the content hash so that changed data files never reuse results.
    The suite version is not hashed (it is recorded in the cell's provenance): cells from two
    releases with the same hash are the same experiment, and merge.
    """
    return _digest(cell._spec_json, dataset_hash)


def legacy_cell_hash(cell: Cell, dataset_hash: str | None, suite_version: str) -> str:
    """The hash a cell had before 0.4.0, when the suite version was hashed instead of
    :data:`PIPELINE_VERSION` (``bench migrate`` checks an old cell's folder name with it)."""
    return _digest(cell._spec_json, dataset_hash, b"bench=" + suite_version.encode("utf-8"))


def privatization_hash(cell: Cell, dataset_hash: str | None = None,
                        mapping: bool = True) -> str:
    """Identity of a cell's privatized corpus, shared by cells that differ only in the model or
    in model/metric settings: dataset (+config, content hash), embedding, vocab size, OOV
    policy, sensitivity, mechanism, mapping (all with parameters and versions), ε and seed.

    ``mapping=False`` leaves the word mapping out: cells equal under it perturb the same
    vectors with the same noise (an additive mechanism draws its noise before, and
    independently of, the mapping), so their nearest-word searches are one search
    (:func:`bench.run.runner.plan`)."""
    spec = _hashable_spec(cell)
    s = cell.settings
    payload = {
        "dataset": spec["dataset"],
        "embedding": [s.get("embedding"), s.get("embedding_path"), s.get("vocab_size"),
                      s.get("oov")],
        "sensitivity": spec["sensitivity"],
        "mechanism": spec["mechanism"],
        "mapping": spec["mapping"] if mapping else None,
        "epsilon": spec["epsilon"],
        "seed": spec["seed"],
    }
    return _digest(payload, dataset_hash)


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:g}"
    if isinstance(v, (list, tuple, Mapping)):
        return canonical_json(v)
    return str(v)


def _fmt_params(params: Mapping[str, Any]) -> str:
    if not params:
        return ""
    return "(" + ",".join(f"{k}={_fmt_value(params[k])}" for k in sorted(params)) + ")"


def _nondefault(kind: str, name: str, params: Mapping[str, Any]) -> str:
    defaults = component_defaults(kind, name)
    return _fmt_params({k: v for k, v in params.items() if defaults.get(k, _MISSING) != v})
