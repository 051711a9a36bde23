"""The typed cell record: a cell's ``metrics.json`` as typed sections.

One class per section a cell's metrics hold -- :class:`Utility`, per private attribute
:class:`AttributePrivacy` with its :class:`AdversaryResult` per adversary, :class:`Membership`,
:class:`RewriteScores`, :class:`Deltas` against the baseline (with :class:`AttributeDelta`),
:class:`Runtime`, :class:`Privatization` -- gathered by :class:`CellMetrics`. Readers use
attributes (``m.utility.macro_f1``, ``m.privacy["gender"].privacy``,
``m.vs_baseline.attribute("gender").tradeoff``) instead of chains of string keys behind broad
``except`` clauses; a value a record does not have reads as ``None``, and a section or a private
attribute it does not have reads as an *empty* section (every value None; falsy, like an empty
dict, so ``if m.mia:`` asks whether the cell has membership results). Nothing needs a
``try``.

Every section keeps the keys it was read with (or built with) and writes exactly those back
(:meth:`Section.to_dict`), so ``CellMetrics.from_dict(d).to_dict() == d`` for every cell ever
written (a test checks it on every committed reference cell): reading never rewrites history,
and a cell written through the sections is byte for byte the cell written before them. Keys a
section does not model are kept too (:attr:`Section.extra`). The schema's version is the
manifest's ``format`` (:data:`bench.results.record.SCHEMA`); old records are read through
:func:`upgrade`, the one converter.

Example:
    >>> m = CellMetrics.from_dict(json.loads(path.read_text()))
    >>> m.utility.macro_f1, m.privacy["entities"].adversary
    (0.80, 'informed')
    >>> m.to_dict() == json.loads(path.read_text())
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

S = TypeVar("S", bound="Section")

_META = ("extra", "keys")


@dataclass(frozen=True, kw_only=True)
class Section:
    """Base of every section: its modelled keys are the dataclass fields; ``keys`` are the keys
    the section has (read or built with), ``extra`` the keys it does not model."""

    NESTED: ClassVar[Mapping[str, type[Section]]] = {}
    """Fields holding one nested section."""
    NESTED_MAPS: ClassVar[Mapping[str, type[Section]]] = {}
    """Fields holding a mapping name → nested section."""

    keys: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The keys this section has, in their order (written back by :meth:`to_dict`, exactly
    these, in this order: a cell written through the sections is the same bytes)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Keys this version of the schema does not model, as read."""

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The modelled keys."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _META)

    @classmethod
    def from_dict(cls: type[S], d: Mapping[str, Any] | None) -> S | None:
        """The section of a metrics dict's value (None stays None; a non-mapping is refused:
        :func:`bench.results.record.validate` runs first on anything read)."""
        if d is None:
            return None
        if not isinstance(d, Mapping):
            raise TypeError(f"{cls.__name__}: expected a mapping, got {type(d).__name__}")
        known = set(cls.fields())
        values: dict[str, Any] = {}
        nulls = {k for k, v in d.items() if v is None and k in cls.NESTED}
        for k, v in d.items():
            if k not in known or k in nulls:
                continue  # a stored null section reads as an empty one and is written back null
            if k in cls.NESTED:
                v = cls.NESTED[k].from_dict(v)
            elif k in cls.NESTED_MAPS and isinstance(v, Mapping):
                v = {name: cls.NESTED_MAPS[k].from_dict(x) if isinstance(x, Mapping) else x
                     for name, x in v.items()}
            values[k] = v
        return cls(keys=tuple(d), extra={k: v for k, v in d.items()
                                         if k not in known or k in nulls}, **values)

    @classmethod
    def make(cls: type[S], extra: Mapping[str, Any] | None = None, **values: Any) -> S:
        """A section built by a stage: it has exactly the keys given, ``values`` (modelled keys
        only: a misspelt key is refused) then ``extra`` (keys a plugin adds, e.g. a plugin
        rewrite metric's score)."""
        unknown = set(values) - set(cls.fields())
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown key(s) {sorted(unknown)}")
        extra = dict(extra or {})
        clash = set(extra) & (set(values) | set(cls.fields()))
        if clash:
            raise TypeError(f"{cls.__name__}: modelled key(s) {sorted(clash)} given as extra")
        return cls(keys=tuple(values) + tuple(extra), extra=extra, **values)

    def __bool__(self) -> bool:
        """Whether the section has any key (an absent section reads as an empty one)."""
        return bool(self.keys)

    def with_values(self: S, **values: Any) -> S:
        """A copy with ``values`` set (keys it did not have are added at the end)."""
        unknown = set(values) - set(self.fields())
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown key(s) {sorted(unknown)}")
        keys = self.keys + tuple(k for k in values if k not in self.keys)
        return dataclasses.replace(self, keys=keys, **values)

    def value(self, key: str) -> Any:
        """The value of ``key`` whether the schema models it or not (a plugin's metric is kept
        in :attr:`extra`); None when absent. For keys held in a variable (a metric's name)."""
        if key in self.fields():
            return getattr(self, key)
        return self.extra.get(key)

    def has(self, key: str) -> bool:
        """Whether the record has ``key`` (a value of None included)."""
        return key in self.keys

    def to_dict(self) -> dict[str, Any]:
        """The section as ``metrics.json`` holds it: exactly its keys."""
        out: dict[str, Any] = {}
        for k in self.keys:
            if k in self.extra:
                out[k] = self.extra[k]
                continue
            out[k] = _stored(getattr(self, k), k in self.NESTED_MAPS)
        return out


def _stored(v: Any, nested_map: bool) -> Any:
    """A field's value as ``metrics.json`` holds it: a section as its dict, a mapping of
    sections (``nested_map``) as a mapping of dicts."""
    if isinstance(v, Section):
        return v.to_dict()
    if nested_map and isinstance(v, Mapping):
        return {n: x.to_dict() if isinstance(x, Section) else x for n, x in v.items()}
    return v


def interval(v: Any) -> tuple[float, float] | None:
    """A stored ``[low, high]`` as a tuple of floats, None when absent or malformed."""
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return float(v[0]), float(v[1])
    return None


@dataclass(frozen=True, kw_only=True)
class Utility(Section):
    """The utility model's macro-F1 on the (privatized) test split."""

    task: str | None = None
    """The utility task's name."""
    macro_f1: float | None = None
    """Macro-F1 on the test split."""
    macro_f1_ci95: list[float] | None = None
    """Its 95% bootstrap interval ``[low, high]``."""
    accuracy: float | None = None
    per_class_f1: list[float] | None = None
    n: int | None = None
    """Test documents."""
    label_accuracy: float | None = None
    """Multilabel tasks: the fraction of (document, label) decisions that are right."""
    chance_level: bool | None = None
    """Whether the F1 is at chance (within the chance threshold)."""
    chance_threshold: float | None = None
    fit_seconds: float | None = None
    loss: float | None = None
    """The utility model's test loss (models that report one)."""
    test_loss: float | None = None
    """Its name in some older cells."""
    test_text: str | None = None
    """What the model was scored on: ``original`` (the original test documents: grid setting
    ``utility_test: original``, the TEM paper's protocol) or absent (the privatized test
    split, the suite's default)."""


@dataclass(frozen=True, kw_only=True)
class AdversaryResult(Section):
    """One adversary's attack on one private attribute."""

    adversary_macro_f1: float | None = None
    adversary_macro_f1_ci95: list[float] | None = None
    adversary_accuracy: float | None = None
    adversary_label_accuracy: float | None = None
    adversary_per_class_f1: list[float] | None = None
    privacy: float | None = None
    """1 − the adversary's macro-F1."""
    privacy_ci95: list[float] | None = None
    chance_level: bool | None = None
    chance_threshold: float | None = None
    n: int | None = None
    fit_seconds: float | None = None
    predict_seconds: float | None = None
    version: str | None = None


@dataclass(frozen=True, kw_only=True)
class AttributePrivacy(AdversaryResult):
    """Empirical privacy of one private attribute: the strongest adversary's result (its
    fields, the headline) and every adversary's (:attr:`by_adversary`)."""

    NESTED_MAPS: ClassVar[Mapping[str, type[Section]]] = {"by_adversary": AdversaryResult}

    adversary: str | None = None
    """The strongest adversary's name (the headline)."""
    by_adversary: Mapping[str, AdversaryResult] = field(default_factory=dict)
    """Every adversary's result (empty in cells from before several adversaries)."""
    adversaries_left_out: list[list[str]] | None = None
    """``[name, why]`` of the adversaries that do not apply to the cell's output."""
    privacy_valid: bool | None = None
    """Whether this is a privacy measurement (the strongest adversary beats chance on the
    unprivatized baseline); None when unknown."""
    privacy_invalid_reason: str | None = None
    seconds: float | None = None
    missing: bool | None = None
    """Set by :func:`bench.analysis.privacy.select_privacy` when the adversary a report reads
    did not attack this cell (never stored)."""

    def result(self, adversary: str) -> AdversaryResult:
        """Adversary ``adversary``'s result (an empty one when it did not attack)."""
        x = self.by_adversary.get(adversary) if isinstance(self.by_adversary, Mapping) else None
        return x if isinstance(x, AdversaryResult) else AdversaryResult()


@dataclass(frozen=True, kw_only=True)
class Membership(Section):
    """Membership inference (shadow model and loss threshold)."""

    mia_auc: float | None = None
    mia_auc_ci: list[float] | None = None
    mia_valid: bool | None = None
    mia_invalid_reason: str | None = None
    mia_advantage: float | None = None
    mia_accuracy: float | None = None
    mia_attack: str | None = None
    mia_attacks: Mapping[str, Any] | None = None
    mia_shadow_auc: float | None = None
    mia_member_accuracy: float | None = None
    mia_nonmember_accuracy: float | None = None
    query: str | None = None
    """What the attacker queries the target with: ``original`` or ``privatized`` text."""
    n_members: int | None = None
    n_nonmembers: int | None = None
    n_shadow: int | None = None
    n_shadow_examples: int | None = None
    n_boot: int | None = None
    features: Any = None
    attack_epochs: int | None = None
    shadow_auc: float | None = None
    target_member_accuracy: float | None = None
    target_nonmember_accuracy: float | None = None
    target_params: Any = None
    seconds: float | None = None
    auc: float | None = None
    """The AUC under its name in cells from before 0.3.0 (:attr:`headline_auc`)."""

    @property
    def headline_auc(self) -> float | None:
        """The headline AUC: ``mia_auc``, else the old cells' ``auc``."""
        return self.mia_auc if self.has("mia_auc") else self.auc


@dataclass(frozen=True, kw_only=True)
class RewriteScores(Section):
    """How much text survives: N_w, ROUGE, BLEU, BERTScore (and the rewriter's loss)."""

    n_w: float | None = None
    rouge1: float | None = None
    rouge2: float | None = None
    rougeL: float | None = None  # noqa: N815 - the metric's name
    bleu: float | None = None
    bertscore: float | None = None
    n_docs: int | None = None
    loss: float | None = None


@dataclass(frozen=True, kw_only=True)
class AttributeDelta(Section):
    """One private attribute's change against the baseline (the thesis' Δ definitions)."""

    delta_privacy: float | None = None
    delta_utility: float | None = None
    tradeoff: float | None = None
    """Δutility + Δprivacy (the thesis' trade-off)."""
    privacy_valid: bool | None = None
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class Deltas(Section):
    """The cell against its baseline (``metrics["vs_baseline"]``)."""

    NESTED_MAPS: ClassVar[Mapping[str, type[Section]]] = {"by_privacy_task": AttributeDelta}

    delta_utility: float | None = None
    by_privacy_task: Mapping[str, AttributeDelta] = field(default_factory=dict)

    def attribute(self, name: str) -> AttributeDelta:
        """The deltas of private attribute ``name`` (an empty section when the cell has none)."""
        x = self.by_privacy_task.get(name) if isinstance(self.by_privacy_task, Mapping) else None
        return x if isinstance(x, AttributeDelta) else AttributeDelta()


@dataclass(frozen=True, kw_only=True)
class Runtime(Section):
    """Wall-clock seconds per stage (and counts of cached channels)."""

    total_seconds: float | None = None
    load_seconds: float | None = None
    privatize_seconds: float | None = None
    privatize_tokens_per_second: float | None = None
    rewrite_seconds: float | None = None
    rewriter_seconds: float | None = None
    utility_fit_seconds: float | None = None
    adversary_seconds: float | None = None
    mia_seconds: float | None = None
    measures_seconds: float | None = None
    channel_seconds: float | None = None
    channels_computed: float | None = None
    channel_reuse_seconds: float | None = None
    channels_reused: float | None = None

    def get(self, key: str, default: float = 0.0) -> float:
        """A runtime entry as a float (``default`` when absent or not a number)."""
        v = getattr(self, key, None) if key in self.fields() else self.extra.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default


@dataclass(frozen=True, kw_only=True)
class Privatization(Section):
    """What the privatization did: tokens, OOV, N_w, its guarantee and fitted parameters."""

    n_tokens: int | None = None
    n_oov: int | None = None
    n_w: float | None = None
    output: str | None = None
    """``text`` or ``vectors``."""
    oov_leaks: bool | None = None
    cache_hit: bool | None = None
    guarantee: Mapping[str, Any] | None = None
    guarantee_text: str | None = None
    privatizer: Mapping[str, Any] | None = None
    """The privatizer's description (fitted noise parameters)."""
    seconds: float | None = None
    privatize_seconds: float | None = None
    tokens_per_second: float | None = None
    seconds_per_document: float | None = None
    """A document-level mechanism's cost per document (``dp_prompt``, ``dp_mlm``; absent
    for the word-level ones)."""


@dataclass(frozen=True, kw_only=True)
class CellMetrics(Section):
    """A cell's whole ``metrics.json``."""

    NESTED: ClassVar[Mapping[str, type[Section]]] = {
        "utility": Utility, "mia": Membership, "rewrite": RewriteScores,
        "rewrite_reference": RewriteScores, "vs_baseline": Deltas, "runtime": Runtime,
        "privatization": Privatization}
    NESTED_MAPS: ClassVar[Mapping[str, type[Section]]] = {"privacy": AttributePrivacy}

    cell: str | None = None
    """The cell's readable name."""
    dataset_hash: str | None = None
    utility: Utility = field(default_factory=Utility)
    privacy: Mapping[str, AttributePrivacy] = field(default_factory=dict)
    """Per private attribute (:meth:`attribute`)."""
    mia: Membership = field(default_factory=Membership)
    rewrite: RewriteScores = field(default_factory=RewriteScores)
    rewrite_reference: RewriteScores = field(default_factory=RewriteScores)
    """The rewriter on unperturbed embeddings (cells with a rewriter)."""
    rewriter: Mapping[str, Any] | None = None
    vs_baseline: Deltas = field(default_factory=Deltas)
    runtime: Runtime = field(default_factory=Runtime)
    privatization: Privatization = field(default_factory=Privatization)
    guarantee: Mapping[str, Any] | None = None
    """The guarantee record (:meth:`bench.guarantee.Guarantee.from_dict`)."""
    n_w: float | None = None
    measures: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per measure (:mod:`bench.measures`), each its own record (:meth:`measure`)."""
    plugins: Mapping[str, str] | None = None
    suite_version: str | None = None

    def attribute(self, name: str) -> AttributePrivacy:
        """The privacy record of private attribute ``name`` (an empty one when not measured)."""
        x = self.privacy.get(name) if isinstance(self.privacy, Mapping) else None
        return x if isinstance(x, AttributePrivacy) else AttributePrivacy()

    @property
    def attributes(self) -> list[str]:
        """The private attributes measured, in the record's order."""
        if not isinstance(self.privacy, Mapping):
            return []
        return [k for k, v in self.privacy.items() if isinstance(v, AttributePrivacy)]

    def measure(self, name: str) -> Mapping[str, Any]:
        """Measure ``name``'s own record (docs/measures.md; empty when not measured)."""
        x = self.measures.get(name) if isinstance(self.measures, Mapping) else None
        return x if isinstance(x, Mapping) else {}


def set_sections(metrics: dict[str, Any], **sections: Any) -> dict[str, Any]:
    """Write whole entries of a metrics dict being built (the stages and the validity marks):
    the one place a cell's metrics are written by key. Names must be :class:`CellMetrics`
    fields (a misspelt one is refused); a :class:`Section` is written as its dict, a mapping of
    sections (``privacy``) as a mapping of dicts. An entry already there keeps its place.

    Example:
        >>> set_sections(run.metrics, utility=Utility.make(task="topic", macro_f1=0.8))
    """
    unknown = set(sections) - set(CellMetrics.fields())
    if unknown:
        raise TypeError(f"CellMetrics: unknown section(s) {sorted(unknown)}")
    for k, v in sections.items():
        metrics[k] = _stored(v, k in CellMetrics.NESTED_MAPS)
    return metrics


def upgrade(metrics: Mapping[str, Any]) -> CellMetrics:
    """The one converter from any stored metrics record to :class:`CellMetrics`.

    Every format written so far (schema 1 and the cells from before 0.4.0) has the keys the
    sections model, with some keys absent in older cells (read as None); nothing needs
    renaming yet. A future change of the schema converts old records here, and only here.
    """
    m = CellMetrics.from_dict(metrics)
    assert m is not None
    return m

