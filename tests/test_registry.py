"""Tests for bench.registry: registration, duplicates, did-you-mean, lazy entries, origins and
entry-point discovery of plugins (fake ``*.dist-info`` folders on ``sys.path``; the end-to-end
plugin tests are in tests/test_plugins.py)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.errors import InputError
from bench.registry import (
    BUILTIN,
    ENTRY_POINT_GROUPS,
    ParameterError,
    Registry,
    UnknownNameError,
    declared_params,
    name_problem,
)


def test_decorator_registration_returns_object():
    reg: Registry = Registry("widget")

    @reg.register("alpha")
    class Alpha:
        pass

    assert reg.get("alpha") is Alpha
    assert "alpha" in reg and "beta" not in reg
    assert len(reg) == 1 and list(reg) == ["alpha"]


def test_names_sorted():
    reg: Registry = Registry("widget")
    for name in ("zeta", "alpha", "mu"):
        reg.register(name)(object())
    assert reg.names() == ["alpha", "mu", "zeta"] == list(reg)


def test_duplicate_name_is_an_error():
    reg: Registry = Registry("widget")
    reg.register("alpha")(1)
    with pytest.raises(ValueError, match="widget 'alpha' is already registered"):
        reg.register("alpha")(2)
    with pytest.raises(ValueError, match="already registered"):
        reg.register_lazy("alpha", "json:dumps")
    assert reg.get("alpha") == 1  # the first registration stays


def test_unknown_name_did_you_mean():
    reg: Registry = Registry("mechanism", group="")  # "": no plugins in the list
    for name in ("truncated_gumbel", "trlaplace", "mvl"):
        reg.register(name)(name)
    with pytest.raises(UnknownNameError) as info:
        reg.get("trlaplac")
    msg = str(info.value)
    assert "unknown mechanism 'trlaplac'" in msg
    assert "did you mean 'trlaplace'" in msg
    assert "known: mvl, trlaplace, truncated_gumbel" in msg
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert not str(info.value).startswith('"')  # not KeyError's quoted repr


def test_unknown_name_without_close_match_has_no_hint():
    reg: Registry = Registry("mechanism", group="")
    reg.register("mvl")("x")
    with pytest.raises(UnknownNameError) as info:
        reg.get("completely_different")
    assert "did you mean" not in str(info.value)


def test_lazy_entry_imported_on_first_get():
    reg: Registry = Registry("codec")
    reg.register_lazy("dumps", "json:dumps")
    assert "dumps" in reg
    assert isinstance(reg._entries["dumps"], str)  # not imported yet
    assert reg.get("dumps") is json.dumps
    assert reg._entries["dumps"] is json.dumps  # cached after import
    assert reg.get("dumps") is json.dumps


def test_lazy_entry_bad_target():
    reg: Registry = Registry("codec")
    with pytest.raises(ValueError, match="module:attr"):
        reg.register_lazy("x", "json.dumps")
    reg.register_lazy("missing_attr", "json:no_such_function")
    with pytest.raises(AttributeError):
        reg.get("missing_attr")
    reg.register_lazy("missing_module", "no_such_module_xyz:f")
    with pytest.raises(ModuleNotFoundError):
        reg.get("missing_module")


# ------------------------------------------------------------------------------------ plugins

GROUP = "bench.testwidgets"  # a group no real distribution uses


def fake_dist(root: Path, dist: str, entries: dict[str, str], modules: dict[str, str] = (),
              group: str = GROUP, version: str = "0.1") -> Path:
    """An installed-looking distribution under ``root``: ``<dist>-<version>.dist-info`` with
    METADATA and entry_points.txt (all importlib.metadata needs), plus module files."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    for mod, src in dict(modules).items():
        (root / f"{mod}.py").write_text(textwrap.dedent(src))
    return root


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh folder on sys.path (removed afterwards) and a unique module-name prefix."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    prefix = f"plug_{tmp_path.name.replace('-', '_')}_"
    yield root, prefix
    for mod in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[mod]


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "bench.registry" and r.levelno == logging.WARNING]


def test_every_kind_has_a_group_and_builtins_are_from_bench():
    assert ENTRY_POINT_GROUPS["mechanism"] == "bench.mechanisms"
    assert set(ENTRY_POINT_GROUPS.values()) == {
        "bench.mechanisms", "bench.sensitivity", "bench.mappings", "bench.embeddings",
        "bench.datasets", "bench.models", "bench.adversaries", "bench.metrics",
        "bench.rewriters", "bench.measures"}
    assert Registry("mechanism").group == "bench.mechanisms"
    assert Registry("widget").group == "" and Registry("mechanism", group="").group == ""
    reg: Registry = Registry("widget")
    reg.register("a")(1)
    reg.register_lazy("b", "json:dumps")
    assert reg.origin("a") == reg.origin("b") == BUILTIN and reg.origin_note("a") == ""
    with pytest.raises(UnknownNameError):
        reg.origin("c")


def test_real_registries_have_their_groups():
    from bench.attacks.adversary import ADVERSARIES
    from bench.datasets import DATASETS
    from bench.embeddings import EMBEDDINGS
    from bench.mapping import MAPPINGS
    from bench.measures import MEASURES
    from bench.mechanisms import MECHANISMS
    from bench.metrics import METRICS
    from bench.models import MODELS
    from bench.rewriters import REWRITERS
    from bench.sensitivity import SENSITIVITY

    regs = (ADVERSARIES, DATASETS, EMBEDDINGS, MAPPINGS, MEASURES, MECHANISMS, METRICS, MODELS,
            REWRITERS, SENSITIVITY)
    assert sorted(r.group for r in regs) == sorted(ENTRY_POINT_GROUPS.values())
    assert MECHANISMS.origin("tem") == BUILTIN and DATASETS.origin("bbc") == BUILTIN


def test_plugin_is_discovered_lazily_with_its_origin(site, caplog):
    root, pre = site
    fake_dist(root, "bench-widgets", {"gizmo": f"{pre}mod:Gizmo"},
              {f"{pre}mod": "class Gizmo:\n    version = '2'\n"}, version="1.2.3")
    reg: Registry = Registry("widget", group=GROUP)
    reg.register("alpha")(object)
    assert not reg._discovered  # registering does not read the entry points
    assert reg.names() == ["alpha", "gizmo"] and "gizmo" in reg and len(reg) == 2
    assert f"{pre}mod" not in sys.modules  # listed, not imported
    assert reg.origin("gizmo") == "bench-widgets 1.2.3"
    assert reg.origin_note("gizmo") == " [plugin: bench-widgets 1.2.3]"
    assert reg.plugins_note() == "plugins: gizmo [bench-widgets 1.2.3]\n"
    assert reg.get("gizmo").version == "2" and f"{pre}mod" in sys.modules
    assert reg.origin("alpha") == BUILTIN
    assert warnings_of(caplog) == []


def test_plugin_colliding_with_a_builtin_is_refused(site, caplog):
    root, pre = site
    fake_dist(root, "bench-evil", {"alpha": f"{pre}evil:X", "beta": f"{pre}evil:Y"},
              {f"{pre}evil": "X = Y = 'plugin'\n"})
    reg: Registry = Registry("widget", group=GROUP)
    reg.register("alpha")("builtin")
    assert reg.get("alpha") == "builtin" and reg.origin("alpha") == BUILTIN
    assert reg.get("beta") == "plugin"
    (msg,) = warnings_of(caplog)
    assert "widget plugin 'alpha' from package bench-evil 0.1 is refused" in msg
    assert "a built-in widget" in msg
    reg.names()
    assert len(warnings_of(caplog)) == 1  # once


def test_builtin_registered_after_discovery_still_wins(site, caplog):
    """Order: a registry asked for its names before all built-ins are registered (e.g. from
    inside a package __init__) must not let a plugin take a built-in's name."""
    root, pre = site
    fake_dist(root, "bench-evil", {"late": f"{pre}evil:X"}, {f"{pre}evil": "X = 'plugin'\n"})
    reg: Registry = Registry("widget", group=GROUP)
    reg.register("early")(1)
    assert reg.origin("late") == "bench-evil 0.1"  # discovery ran before "late" was registered
    reg.register("late")("builtin")
    assert reg.get("late") == "builtin" and reg.origin("late") == BUILTIN
    (msg,) = warnings_of(caplog)
    assert "'late' from package bench-evil 0.1 is refused" in msg
    with pytest.raises(ValueError, match="already registered"):
        reg.register("late")("again")  # built-in vs built-in is still an error


def test_broken_plugin_warns_once_and_is_then_unknown(site, caplog):
    root, pre = site
    fake_dist(root, "bench-broken", {"bad": f"{pre}bad:X", "good": f"{pre}good:Y"},
              {f"{pre}bad": "raise ImportError('boom: missing dependency')\n",
               f"{pre}good": "Y = 'ok'\n"})
    reg: Registry = Registry("widget", group=GROUP)
    reg.register("alpha")(1)
    assert reg.names() == ["alpha", "bad", "good"]
    with pytest.raises(UnknownNameError, match="bench-broken 0.1, which failed to load "
                       r"\(ImportError: boom: missing dependency\)"):
        reg.get("bad")
    (msg,) = warnings_of(caplog)
    assert "widget plugin 'bad' from package bench-broken 0.1 cannot be loaded" in msg
    assert "ImportError: boom: missing dependency" in msg
    assert reg.names() == ["alpha", "good"] and "bad" not in reg
    with pytest.raises(UnknownNameError, match="failed to load"):
        reg.get("bad")
    assert reg.items() == [("alpha", 1), ("good", "ok")]
    assert len(warnings_of(caplog)) == 1  # exactly once
    assert reg.origin("bad") == "bench-broken 0.1"
    assert reg.broken() == {"bad": ("bench-broken 0.1", "ImportError: boom: missing dependency")}
    assert reg.broken_note() == ("not loaded: widget 'bad' [plugin: bench-broken 0.1]: "
                                 "ImportError: boom: missing dependency\n")


def test_items_skips_a_broken_plugin_not_yet_loaded(site, caplog):
    root, pre = site
    fake_dist(root, "bench-broken", {"bad": f"{pre}bad:X"},
              {f"{pre}bad": "X = 1 / 0\n"})
    reg: Registry = Registry("widget", group=GROUP)
    reg.register_lazy("json", "json:dumps")
    assert reg.items() == [("json", json.dumps)]
    assert "ZeroDivisionError" in warnings_of(caplog)[0] and len(warnings_of(caplog)) == 1


def test_builtin_lazy_import_error_still_raises(site):
    reg: Registry = Registry("widget", group=GROUP)
    reg.register_lazy("missing", "no_such_module_xyz:f")
    with pytest.raises(ModuleNotFoundError):
        reg.items()


def test_two_plugins_same_name_first_on_path_wins(site, caplog, tmp_path, monkeypatch):
    root, pre = site
    fake_dist(root, "bench-one", {"dup": f"{pre}one:X"}, {f"{pre}one": "X = 1\n"})
    other = tmp_path / "site2"
    fake_dist(other, "bench-two", {"dup": f"{pre}two:X"}, {f"{pre}two": "X = 2\n"})
    monkeypatch.syspath_prepend(str(other))  # now first on sys.path
    reg: Registry = Registry("widget", group=GROUP)
    assert reg.get("dup") == 2 and reg.origin("dup") == "bench-two 0.1"
    (msg,) = warnings_of(caplog)
    assert "'dup' from package bench-one 0.1 is refused" in msg
    assert "plugin package bench-two 0.1" in msg


def test_plugin_module_may_register_itself_with_the_decorator(site, tmp_path, monkeypatch):
    root, pre = site
    reg: Registry = Registry("widget", group=GROUP)
    monkeypatch.setattr(sys.modules[__name__], "PLUGIN_REGISTRY", reg, raising=False)
    fake_dist(root, "bench-deco", {"deco": f"{pre}deco:Deco", "clash": f"{pre}deco:Deco"}, {
        f"{pre}deco": f"""
        import {__name__} as t

        @t.PLUGIN_REGISTRY.register("deco")
        class Deco:
            pass

        t.PLUGIN_REGISTRY.register("extra")(42)  # not declared: still attributed to the plugin
        """})
    reg.register("clash")("builtin")
    assert reg.get("deco").__name__ == "Deco" and reg.origin("deco") == "bench-deco 0.1"
    assert reg.get("extra") == 42 and reg.origin("extra") == "bench-deco 0.1"
    assert reg.get("clash") == "builtin"


def test_entry_point_without_attribute_is_ignored(site, caplog):
    root, pre = site
    fake_dist(root, "bench-noattr", {"mod": f"{pre}noattr"}, {f"{pre}noattr": "X = 1\n"})
    reg: Registry = Registry("widget", group=GROUP)
    assert reg.names() == []
    assert "must be 'module:attr'" in warnings_of(caplog)[0]


def test_import_bench_does_not_read_entry_points():
    code = ("import bench, bench.mechanisms, bench.sensitivity, bench.mapping, bench.models, "
            "bench.registry as r; print(r._scan.cache_info().misses)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "0"


# -- one name, one way to build ----------------------------------------------------------------

class _Widget:
    """A toy component: keyword-only parameters stored under their own names."""

    name = ""

    def __init__(self, *, size: int, colour: str = "red", n_threads: int | None = None,
                 tags: tuple = ("a",)) -> None:
        if size < 1:
            raise ValueError(f"size must be >= 1, got {size}")
        self.size, self.colour, self.n_threads, self.tags = size, colour, n_threads, tags


def test_register_takes_the_name_attribute():
    reg: Registry = Registry("widget", group="")

    @reg.register()
    class Big(_Widget):
        name = "big"

    assert reg.get("big") is Big
    with pytest.raises(ValueError, match="has no 'name' attribute of its own"):
        reg.register()(_Widget)  # the inherited "" is no name
    with pytest.raises(ValueError, match="declares name 'big' but is registered as 'large'"):
        reg.register("large")(Big)

    @reg.register("small")
    class Small(_Widget):  # an inherited default name: the registered one is set
        pass

    assert Small.name == "small" and _Widget.name == ""


def test_lazy_builtin_name_must_match_the_class():
    reg: Registry = Registry("widget", group="")
    reg.register_lazy("wrong", "tests.test_registry:_Named")
    with pytest.raises(ValueError, match="declares name 'named'"):
        reg.get("wrong")


class _Named(_Widget):
    name = "named"


def test_create_builds_and_names_bad_parameters():
    reg: Registry = Registry("widget", group="")
    reg.register("w")(_Widget)
    w = reg.create("w", size=2)
    assert isinstance(w, _Widget) and w.size == 2
    with pytest.raises(UnknownNameError, match="did you mean 'w'"):
        reg.create("ww", size=2)
    with pytest.raises(ParameterError, match=r"widget 'w': unknown parameter 'colur' \(did you "
                       r"mean 'colour'\?\); accepted: size, colour, n_threads, tags"):
        reg.create("w", size=2, colur="blue")
    with pytest.raises(ParameterError, match="widget 'w': missing required parameter 'size'"):
        reg.create("w")
    with pytest.raises(ParameterError, match="widget 'w': size must be >= 1, got 0") as e:
        reg.create("w", size=0)
    # one error, an input error that callers catching the old built-in kinds still catch
    assert isinstance(e.value, InputError) and isinstance(e.value, ValueError)
    assert isinstance(e.value, TypeError)


def test_create_refuses_objects_that_are_not_classes():
    reg: Registry = Registry("dataset", group="")
    reg.register("x")(object())
    with pytest.raises(TypeError, match="not a class"):
        reg.create("x")


def test_create_lets_precise_errors_through():
    class Picky(_Widget):
        name = "picky"

        def __init__(self, **kw) -> None:  # **kw: any name passes the signature check
            raise UnknownNameError("no such colour")

    reg: Registry = Registry("widget", group="")
    reg.register()(Picky)
    with pytest.raises(UnknownNameError, match="no such colour"):
        reg.create("picky", colour="x")


def test_declared_params_read_the_constructor():
    w = _Widget(size=3, n_threads=4, tags=("a", "b"))
    assert declared_params(w) == {"size": 3, "colour": "red", "n_threads": 4,
                                  "tags": ["a", "b"]}
    assert list(declared_params(w, exclude={"n_threads"})) == ["size", "colour", "tags"]
    assert declared_params(w, omit_default={"colour", "tags"}) == {
        "size": 3, "n_threads": 4, "tags": ["a", "b"]}


@pytest.mark.parametrize("name, why", [
    ("t\u200bem", "U+200B at position 2"),      # a zero-width space: invisible on a page
    ("t\u0435m", "U+0435 at position 2"),       # a Cyrillic e: looks like tem
    ("-tem", "must start with a letter or digit"),
    ("x" * 65, "at most 64 characters"),
])
def test_a_name_with_an_invisible_or_look_alike_character_is_refused(name, why):
    reg = Registry("mechanism", group="")
    with pytest.raises(ValueError, match=re.escape(why)):
        reg.register(name)(lambda: None)
    with pytest.raises(ValueError, match=re.escape(why)):
        reg.register_lazy(name, "bench.mechanisms:MECHANISMS")
    assert name_problem("truncated_gumbel") is None and name_problem("glove-6b-50d") is None
