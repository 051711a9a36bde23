"""Validation: grid values -> checked entries, and the reason a well-formed cell cannot run.

:class:`Parser` turns each raw value (a name, ``{name: ..., <param>: ...}``, an ε, a seed, the
settings) into a checked :class:`Entry`: names are looked up in the registries (unknown ones get
a did-you-mean), parameters are checked by constructing the cheap, unfitted component and
against the resource limits (:mod:`bench.grid.limits`), and every error names the file and the
key. :func:`skip_reason` says why a cell that is well-formed
cannot run (those cells are skipped, not errors).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.grid.components import ModelInfo, construct, model_catalog, param_names, registry
from bench.grid.frozen import FrozenDict, freeze
from bench.grid.limits import derived_error, limit_error
from bench.grid.parse import RawGrid
from bench.grid.schema import (
    BASELINE,
    DATA_KEY,
    METRIC_GROUPS,
    OPTIONAL_SETTINGS,
    PROBE_EPSILONS,
    SETTINGS_DEFAULTS,
    UTILITY_TEST,
    GridError,
    unknown,
)


@dataclass(frozen=True)
class Entry:
    """One parsed axis value of a named axis."""

    kind: str
    name: str
    params: FrozenDict  # resolved (defaults filled) for components; as given for dataset/model
    given: FrozenDict  # as written
    where: str
    version: str = ""
    extra: Any = None  # mechanism: a probe instance; mapping: instance; model: ModelInfo;
    #                    dataset: skip reason or ""


class Parser:
    """Turns raw YAML values into validated entries; errors name file and key."""

    def __init__(self, raw: RawGrid, grid_path: Path) -> None:
        self.raw = raw
        self.grid_path = grid_path
        self.settings: dict[str, Any] = {}
        self._mech_cache: dict[tuple[str, FrozenDict, float], str] = {}

    def file_of(self, key: str) -> Path:
        """The file that defines ``key`` (or its top-level section); by default the grid file."""
        return self.raw.origin.get(key) or self.raw.origin.get(key.split(".")[0]) or \
            self.grid_path

    def fail(self, key: str, msg: str) -> GridError:
        """A :class:`GridError` for ``key`` that names the file it comes from."""
        origin_key = key.split("[")[0]
        if origin_key.startswith("axes."):
            origin_key = ".".join(origin_key.split(".")[:2])
        if origin_key.startswith("settings."):
            origin_key = ".".join(origin_key.split(".")[:2])
        return GridError(f"{self.file_of(origin_key)}: {key}: {msg}")

    # -- settings ----------------------------------------------------------------------------
    def parse_settings(self) -> dict[str, Any]:
        """The checked settings, defaults filled in (also kept as ``self.settings``)."""
        given = self.raw.data.get("settings", {})
        s = {**SETTINGS_DEFAULTS, **given}
        k = "settings."
        emb_reg = registry("embedding")
        if not isinstance(s["embedding"], str):
            raise self.fail(k + "embedding", f"must be an embedding name, got {s['embedding']!r}")
        if s["embedding_path"] is None and s["embedding"] not in emb_reg:
            raise self.fail(k + "embedding", emb_reg.unknown_message(s["embedding"]))
        if s["embedding_path"] is not None and not isinstance(s["embedding_path"], str):
            raise self.fail(k + "embedding_path", "must be a file path or null")
        vs = s["vocab_size"]
        if isinstance(vs, bool) or not isinstance(vs, int) or vs < 2:
            raise self.fail(k + "vocab_size", f"must be an integer >= 2, got {vs!r}")
        for key in ("vocab_size", "rewrite_max_docs"):
            self.check_limits(k + key, "settings", "*", {key: s[key]})
        from bench.embeddings import OOV_POLICIES

        if s["oov"] not in OOV_POLICIES:
            raise self.fail(k + "oov", f"must be one of {', '.join(OOV_POLICIES)}, got "
                                       f"{s['oov']!r}")
        metrics = s["metrics"]
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise self.fail(k + "metrics", f"must be a list of metric groups, got {metrics!r}")
        for m in metrics:
            if m not in METRIC_GROUPS:
                raise self.fail(k + "metrics", unknown("metric group", m, METRIC_GROUPS))
        if s["mia_target"] not in ("memorise", "utility"):
            raise self.fail(k + "mia_target", f"must be 'memorise' (the target is trained to "
                                              f"memorise its members, as in TEM's experiment) or "
                                              f"'utility' (the utility model's settings), got "
                                              f"{s['mia_target']!r}")
        if s["mia_query"] not in ("original", "privatized"):
            raise self.fail(k + "mia_query", f"must be 'original' (the attacker holds a record's "
                                             f"original text and queries the target with it) or "
                                             f"'privatized' (it queries with the privatized text "
                                             f"the target was trained on), got "
                                             f"{s['mia_query']!r}")
        for flag in ("mia", "rewrite_metrics", "baseline", "decode_vectors", "static_attackers"):
            if flag in s and not isinstance(s[flag], bool):
                raise self.fail(k + flag, f"must be true or false, got {s[flag]!r}")
        models = s["models"]
        if not isinstance(models, dict):
            raise self.fail(k + "models", "must map model name -> {hyperparameter: value}")
        catalog = model_catalog()
        for name, params in models.items():
            if name not in catalog:
                raise self.fail(f"{k}models.{name}", unknown("model", name, catalog))
            if not isinstance(params, dict):
                raise self.fail(f"{k}models.{name}", f"must be a mapping of hyperparameters, "
                                                     f"got {params!r}")
            self._check_model_params(f"{k}models.{name}", catalog[name], params)
            self.check_limits(f"{k}models.{name}", "model", name, params)
        s["metrics"] = sorted(set(metrics), key=metrics.index)
        self._check_adversaries(k + "adversaries", s["adversaries"])
        if "measures" in s:
            self._check_measures(k + "measures", s["measures"])
            s["measures"] = sorted(s["measures"])  # one spelling per set (bench measure)
        from bench.rewriters.base import FIT_ON

        if "rewriter_fit_on" in s and s["rewriter_fit_on"] not in FIT_ON:
            raise self.fail(k + "rewriter_fit_on",
                            f"must be 'public' (a rewriter trains on a public corpus disjoint "
                            f"from the evaluated data) or 'private' (on the evaluated dataset's "
                            f"train split; the guarantee is then reported void), got "
                            f"{s['rewriter_fit_on']!r}")
        if "utility_test" in s and s["utility_test"] not in UTILITY_TEST:
            raise self.fail(k + "utility_test",
                            f"must be 'privatized' (the utility model is scored on the "
                            f"privatized test split) or 'original' (on the original test "
                            f"documents, the TEM paper's protocol), got {s['utility_test']!r}")
        self.settings = s
        return s

    def _check_measures(self, key: str, value: Any) -> None:
        """``measures``: a list of distinct measure names (:mod:`bench.measures`)."""
        from bench.measures import MEASURES

        if not isinstance(value, list) or not all(isinstance(m, str) for m in value):
            raise self.fail(key, f"must be a list of measure names, got {value!r}")
        if len(set(value)) != len(value):
            raise self.fail(key, f"names a measure twice: {value!r}")
        for name in value:
            if name not in MEASURES:
                raise self.fail(key, MEASURES.unknown_message(name))

    def _check_adversaries(self, key: str, value: Any) -> None:
        """``adversaries``: null (the default set) or a non-empty list of adversary names."""
        if value is None:
            return
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) for v in value)):
            raise self.fail(key, f"must be a non-empty list of adversary names (`bench ls "
                                 f"adversaries`; `model` = the cell's model) or null for the "
                                 f"default set, got {value!r}")
        from bench.attacks.adversary import ADVERSARIES, MODEL_ADVERSARY

        for v in value:
            if v != MODEL_ADVERSARY and v not in ADVERSARIES:
                raise self.fail(key, unknown("adversary", v, [*ADVERSARIES.names(),
                                                                MODEL_ADVERSARY]))

    def _check_model_params(self, key: str, info: ModelInfo, params: Mapping[str, Any]) -> None:
        if info.params is None:
            return
        for p in params:
            if p not in info.params:
                raise self.fail(key, unknown(f"model {info.name!r} parameter", p, info.params))

    def check_limits(self, key: str, kind: str, name: str, params: Mapping[str, Any],
                     built: Any = None) -> None:
        """The resource limits (:mod:`bench.grid.limits`) on the parameters as given and, with
        ``built`` (the constructed component), on the counts derived from its parameters.
        Called after a component is built, so that its own messages (a type, a lower bound)
        come first."""
        why = limit_error(kind, name, params)
        if why is None and built is not None:
            why = derived_error(kind, name, built.params, self.settings.get("vocab_size"))
        if why:
            label = "setting" if kind == "settings" else f"{kind} {name!r} parameter"
            raise self.fail(key, f"{label} {why}")

    # -- axis values ---------------------------------------------------------------------------
    @staticmethod
    def _split(value: Any) -> tuple[Any, dict[str, Any]] | None:
        if isinstance(value, str):
            return value, {}
        if isinstance(value, dict):
            if "name" not in value or not isinstance(value["name"], str):
                return None
            return value["name"], {str(k): v for k, v in value.items() if k != "name"}
        return None

    def epsilon(self, value: Any, key: str) -> float:
        """A checked ε: a finite number > 0 (a numeric string is accepted)."""
        eps = value
        if isinstance(value, str):
            try:
                eps = float(value)
            except ValueError:
                eps = None
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise self.fail(key, f"epsilon must be a number > 0, got {value!r}")
        eps = float(eps)
        if math.isnan(eps) or eps <= 0:
            raise self.fail(key, f"epsilon must be > 0, got {value!r}")
        if math.isinf(eps):
            raise self.fail(key, "epsilon must be finite (the eps = inf baseline is added "
                                 "automatically; settings.baseline switches it off)")
        return eps

    def seed(self, value: Any, key: str) -> int:
        """A checked seed: an integer >= 0."""
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(key, f"seed must be an integer >= 0, got {value!r}")
        return int(value)

    def values(self, axis: str, values: list[Any], key: str, partial: bool = False) -> list[Any]:
        """The checked values of one axis list (``key[j]`` names each in errors)."""
        out = []
        for j, v in enumerate(values):
            k = f"{key}[{j}]" if len(values) > 1 or key.startswith("axes.") else key
            if axis == "epsilon":
                out.append(self.epsilon(v, k))
            elif axis == "seed":
                out.append(self.seed(v, k))
            else:
                out.append(self.named(axis, v, k, partial=partial))
        return out

    def named(self, axis: str, value: Any, key: str, *, partial: bool = False) -> Entry:
        """Parse a named axis value. ``partial``: an exclude pattern (only the given params)."""
        split = self._split(value)
        if split is None:
            raise self.fail(key, f"must be a name or a mapping {{name: ..., <param>: ...}}, got "
                                 f"{value!r}")
        name, params = split
        parse = getattr(self, f"_{axis}")
        return parse(name, params, key, partial)

    def _dataset(self, name: str, params: dict, key: str, partial: bool) -> Entry:
        reg = registry("dataset")
        if name not in reg:
            raise self.fail(key, reg.unknown_message(name))
        spec = reg.get(name)
        from bench.datasets.base import resolve_config

        try:
            resolved = resolve_config(spec, params)
        except ValueError as e:
            raise self.fail(key, str(e)) from None
        if not partial:
            self.check_limits(key, "dataset", name, params)
        reason = ""
        cell_params = params
        if "path" in spec.options and not partial:
            path = resolved.get("path")
            env = f" or set {spec.env_var}" if spec.env_var else ""
            if path is None or str(path) == "":
                # a paper grid names corpora a user may not hold: skipped, with the reason
                reason = (f"dataset {name!r} needs its data file: not configured (set path: in "
                          f"the grid{env})")
            else:
                cell_params = {**params, DATA_KEY: self._digest(key, spec, name, params, path)}
        return Entry("dataset", name, freeze(cell_params), freeze(params), key,
                     str(spec.version), reason)

    def _digest(self, key: str, spec: Any, name: str, params: dict, path: Any) -> str:
        """The content digest of a dataset's configured file (a file named but missing is an
        error, never a skip: two files are two datasets, :data:`DATA_KEY`)."""
        from bench.datasets.files import content_digest

        where = ("path: in the grid" if params.get("path") not in (None, "")
                 else f"{spec.env_var} (environment)")
        p = Path(str(path)).expanduser()
        if not p.exists():
            raise self.fail(key, f"dataset {name!r}: nothing at {path} (set by {where}); "
                                 f"expected its data file")
        try:
            return content_digest(p)
        except OSError as e:
            raise self.fail(key, f"dataset {name!r}: cannot read {path} (set by {where}): "
                                 f"{e.strerror or e}") from None

    def _model(self, name: str, params: dict, key: str, partial: bool) -> Entry:
        catalog = model_catalog()
        if name not in catalog:
            raise self.fail(key, unknown("model", name, catalog))
        info = catalog[name]
        self._check_model_params(key, info, params)
        if partial:
            return Entry("model", name, freeze(params), freeze(params), key, info.version, info)
        self.check_limits(key, "model", name, params)
        merged = {**self.settings.get("models", {}).get(name, {}), **params}
        return Entry("model", name, freeze(merged), freeze(params), key, info.version, info)

    def _component(self, kind: str, name: str, params: dict, key: str, partial: bool) -> Entry:
        reg = registry(kind)
        if name == BASELINE and kind == "mechanism":
            raise self.fail(key, "mechanism 'none' is the baseline; it is added automatically "
                                 "for every dataset x model x seed (settings.baseline: false "
                                 "switches it off)")
        if name not in reg:
            raise self.fail(key, reg.unknown_message(name))
        cls = reg.get(name)
        allowed = param_names(cls, skip=("epsilon", "rng"))
        if allowed is not None:
            for p in params:
                if p not in allowed:
                    raise self.fail(key, unknown(f"{reg.kind} {name!r} parameter", p, allowed))
        version = str(getattr(cls, "version", "1"))
        if partial:
            return Entry(kind, name, freeze(params), freeze(params), key, version)
        if kind != "mechanism":
            try:
                obj = construct(kind, name, params)
            except (ValueError, TypeError) as e:
                raise self.fail(key, str(e)) from None
            self.check_limits(key, kind, name, params, obj)
            return Entry(kind, name, freeze({**params, **obj.params}), freeze(params), key,
                          version, obj)
        # mechanism: valid parameters must construct at some epsilon (the rules that depend on
        # epsilon, like gaussian's classic calibration, are checked per cell)
        errors = []
        for eps in self.probe_epsilons:
            try:
                obj = construct(kind, name, params, eps)
            except (ValueError, TypeError) as e:
                errors.append(str(e))
                continue
            self.check_limits(key, kind, name, params, obj)
            return Entry(kind, name, freeze({**params, **obj.params}), freeze(params), key,
                          version, obj)
        raise self.fail(key, f"{errors[0]} (refused at every epsilon of the grid)")

    def _mechanism(self, name, params, key, partial):
        return self._component("mechanism", name, params, key, partial)

    def _sensitivity(self, name, params, key, partial):
        return self._component("sensitivity", name, params, key, partial)

    def _mapping(self, name, params, key, partial):
        return self._component("mapping", name, params, key, partial)

    def _rewriter(self, name: str, params: dict, key: str, partial: bool) -> Entry:
        """A rewriter entry (``none``: no rewriter); the seed comes from the cell."""
        from bench.rewriters import NO_REWRITER

        if name == NO_REWRITER:
            if params:
                raise self.fail(key, "rewriter 'none' takes no parameters")
            return Entry("rewriter", name, FrozenDict(), FrozenDict(), key, "")
        reg = registry("rewriter")
        if name not in reg:
            raise self.fail(key, reg.unknown_message(name))
        cls = reg.get(name)
        allowed = param_names(cls, skip=("seed",))
        if allowed is not None:
            for p in params:
                if p not in allowed:
                    raise self.fail(key, unknown(f"rewriter {name!r} parameter", p, allowed))
        version = str(getattr(cls, "version", "1"))
        if partial:
            return Entry("rewriter", name, freeze(params), freeze(params), key, version)
        try:
            obj = construct("rewriter", name, params)
        except (ValueError, TypeError) as e:
            raise self.fail(key, str(e)) from None
        self.check_limits(key, "rewriter", name, params, obj)
        return Entry("rewriter", name, freeze({**params, **obj.params}), freeze(params), key,
                     version, obj)

    def fit_on(self) -> str:
        """The grid's ``rewriter_fit_on`` (``public`` unless the grid says otherwise)."""
        return self.settings.get("rewriter_fit_on", OPTIONAL_SETTINGS["rewriter_fit_on"])

    def rewriter_params(self, rw: Entry, ds: Entry, output: str) -> tuple[FrozenDict, str]:
        """The rewriter's parameters for a cell of dataset ``ds`` (its training corpus
        resolved) and the skip reason ('' when it can run).

        Raises:
            GridError: the cell's privatization outputs no vectors, or the training corpus is
                unknown, missing, or the evaluated data without ``rewriter_fit_on: private``.
        """
        from bench.rewriters.base import PRIVATE_CORPUS, PUBLIC_PART

        if output != "vectors":
            raise self.fail(rw.where, f"rewriter {rw.name!r} reads privatized vectors, but this "
                                      f"cell's privatization outputs {output} (use an additive "
                                      f"mechanism with mapping: none, or leave these cells out "
                                      f"with exclude)")
        corpus = rw.params["corpus"]
        if self.fit_on() == "private":
            if "corpus" in rw.given:
                raise self.fail(rw.where, "rewriter_fit_on: private trains the rewriter on the "
                                          "evaluated dataset's train split; remove corpus")
            return FrozenDict({**rw.params, "corpus": PRIVATE_CORPUS}), ""
        if corpus == PUBLIC_PART:
            if ds.params.get("public") in (None, 0):
                raise self.fail(rw.where, f"rewriter corpus 'public' is the evaluated dataset's "
                                          f"held-apart public part, and dataset {ds.name!r} "
                                          f"holds none apart: set public: N (a count or a "
                                          f"fraction) in its config, or name another corpus "
                                          f"(corpus: <dataset>)")
            return rw.params, ""
        if corpus in (ds.name, PRIVATE_CORPUS):
            raise self.fail(rw.where, f"rewriter corpus {corpus!r} is the evaluated data: a "
                                      f"rewriter trained on it voids the guarantee; use "
                                      f"corpus: public (a held-apart part) or another dataset, "
                                      f"or set settings.rewriter_fit_on: private to accept that")
        reg = registry("dataset")
        if corpus not in reg:
            raise self.fail(rw.where, "training corpus: " + reg.unknown_message(corpus))
        return rw.params, self._dataset(corpus, {}, rw.where, False).extra

    probe_epsilons: tuple[float, ...] = PROBE_EPSILONS

    def mechanism_refusal(self, entry: Entry, eps: float) -> str:
        """The mechanism's own ValueError at this ε ('' when it constructs)."""
        ck = (entry.name, entry.params, eps)
        if ck not in self._mech_cache:
            try:
                construct("mechanism", entry.name, entry.given, eps)
                self._mech_cache[ck] = ""
            except (ValueError, TypeError) as e:
                self._mech_cache[ck] = str(e)
        return self._mech_cache[ck]


def skip_reason(parser: Parser, ds: Entry, model: Entry, mech: Entry, mapping: Entry, eps: float,
                output: str, adversaries_left: list) -> str:
    """Why a well-formed privatized cell cannot run ('' when it can).

    One reason per cell, the most fundamental first: what can never run (an invalid mechanism
    x mapping pair, a model that does not take the output), then what is refused at this ε,
    then what is missing in this environment (a dataset file). An adversary the grid asked for
    by name that cannot run on the cell is an error, not a skip.
    """
    from bench.privatize import InvalidCombination, check_combination

    try:
        check_combination(mech.extra, mapping.extra)
    except InvalidCombination as e:
        return str(e)
    if output not in model.extra.accepts:
        return (f"model {model.name!r} takes {' or '.join(sorted(model.extra.accepts))}"
                f" only; mechanism {mech.name!r} with mapping {mapping.name!r} outputs "
                f"{output} (use mapping nearest or vickrey)")
    if output != "text" and parser.settings.get("utility_test") == "original":
        raise parser.fail("settings.utility_test",
                          f"'original' scores the utility model on the original test text, but "
                          f"mechanism {mech.name!r} with mapping {mapping.name!r} outputs "
                          f"{output}, which a model trained on it cannot read as text: use a "
                          f"mapping to words (nearest) or exclude these cells")
    if adversaries_left and parser.settings["adversaries"] is not None:  # explicitly asked for
        name, why = adversaries_left[0]
        raise parser.fail("settings.adversaries",
                          f"{why} (mechanism {mech.name!r} with mapping {mapping.name!r}): "
                          f"remove {name!r} from the list or exclude these cells (the default "
                          f"set, adversaries: null, leaves it out where it cannot run)")
    return parser.mechanism_refusal(mech, eps) or ds.extra
