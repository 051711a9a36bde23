"""Tests for bench.registry: registration, duplicates, did-you-mean, lazy entries."""

from __future__ import annotations

import json

import pytest

from bench.registry import Registry, UnknownNameError


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
    reg: Registry = Registry("mechanism")
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
    reg: Registry = Registry("mechanism")
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
