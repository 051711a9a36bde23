"""Reading grid files: extends, malformed YAML and keys (errors name the file and key)."""

from __future__ import annotations

import pytest

from bench.grid import (
    GridError,
    load_grid,
)

from .helpers import (
    BASIC,
    grid_with,
    write,
)

# ---------------------------------------------------------------------------------- extends


def test_extends_overrides_axes_and_merges_settings(tmp_path):
    write(tmp_path, BASIC + "settings: {vocab_size: 1000, mia: true}\n", "parent.yaml")
    child = write(tmp_path, """
        name: child
        extends: parent.yaml
        axes:
          epsilon: [3]
          dataset: [bbc]
        settings: {mia: false}
    """, "child.yaml")
    g = load_grid(child)
    assert g.name == "child"
    assert {c.epsilon for c in g.cells if not c.is_baseline} == {3.0}
    assert {c.dataset for c in g.cells} == {"bbc"}
    assert {c.model for c in g.cells} == {"lstm", "bow"}  # inherited axis
    assert g.settings["vocab_size"] == 1000 and g.settings["mia"] is False
    assert len(g.cells) == 2 * 2 * 2 * 2 * 1 * 2 + 2 * 2
    assert len(g.files) == 2


def test_extends_name_not_inherited(tmp_path):
    write(tmp_path, BASIC, "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\n", "mychild.yaml")
    assert load_grid(child).name == "mychild"


def test_extends_cycle_is_an_error(tmp_path):
    write(tmp_path, "extends: b.yaml\n" + BASIC, "a.yaml")
    write(tmp_path, "extends: c.yaml\n", "b.yaml")
    write(tmp_path, "extends: a.yaml\n", "c.yaml")
    with pytest.raises(GridError, match=r"extends: cycle detected: .*a\.yaml -> .*b\.yaml -> "
                                        r".*c\.yaml -> .*a\.yaml"):
        load_grid(tmp_path / "a.yaml")


def test_extends_missing_parent(tmp_path):
    p = write(tmp_path, "extends: nope.yaml\n")
    with pytest.raises(GridError, match=r"g\.yaml: extends: no grid file at .*nope\.yaml"):
        load_grid(p)


def test_error_in_parent_names_the_parent_file(tmp_path):
    write(tmp_path, BASIC.replace("[mvl,", "[mvll,"), "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\naxes: {epsilon: [1]}\n", "child.yaml")
    with pytest.raises(GridError, match=r"parent\.yaml: axes\.mechanism\[0\]: unknown mechanism "
                                        r"'mvll'; did you mean 'mvl'"):
        load_grid(child)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (grid_with() + "exlude: []\n", r"exlude: unknown top-level key 'exlude'; did you mean "
                                       r"'exclude'"),
        (grid_with().replace("  epsilon:", "  epsilons:"),
         r"axes\.epsilons: unknown axis 'epsilons'; did you mean 'epsilon'"),
        (grid_with() + "exclude:\n  - {mechansim: mvl}\n",
         r"exclude\[0\]\.mechansim: unknown axis 'mechansim'; did you mean 'mechanism'"),
        (grid_with() + "exclude:\n  - {mechanism: mvk}\n",
         r"exclude\[0\]\.mechanism: unknown mechanism 'mvk'; did you mean 'mvl'"),
        (grid_with() + "settings: {vocab_sise: 10}\n",
         r"settings\.vocab_sise: unknown setting 'vocab_sise'; did you mean 'vocab_size'"),
        (grid_with() + "settings: {metrics: [utilty]}\n",
         r"settings\.metrics: unknown metric group 'utilty'; did you mean 'utility'"),
        (grid_with() + "settings: {models: {lsmt: {}}}\n",
         r"settings\.models\.lsmt: unknown model 'lsmt'; did you mean 'lstm'"),
        (grid_with() + "settings: {embedding: glove-6b-5d}\n",
         r"settings\.embedding: unknown embedding 'glove-6b-5d'; did you mean 'glove-6b-50d'"),
    ],
)
def test_unknown_keys_did_you_mean(tmp_path, text, pattern):
    with pytest.raises(GridError, match=r"g\.yaml: " + pattern):
        load_grid(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (grid_with(epsilon="[0]"), r"axes\.epsilon\[0\]: epsilon must be > 0, got 0"),
        (grid_with(epsilon="[1, -2]"), r"axes\.epsilon\[1\]: epsilon must be > 0, got -2"),
        (grid_with(epsilon="[abc]"), r"axes\.epsilon\[0\]: epsilon must be a number > 0"),
        (grid_with(epsilon="[true]"), r"axes\.epsilon\[0\]: epsilon must be a number > 0"),
        (grid_with(epsilon="[.inf]"), r"axes\.epsilon\[0\]: epsilon must be finite"),
        (grid_with(epsilon="1"), r"axes\.epsilon: must be a list of values"),
        (grid_with(seed="[-1]"), r"axes\.seed\[0\]: seed must be an integer >= 0"),
        (grid_with(seed="[0.5]"), r"axes\.seed\[0\]: seed must be an integer >= 0"),
        (grid_with(model="[]"), r"axes\.model: empty axis"),
        (grid_with(mechanism="[3]"), r"axes\.mechanism\[0\]: must be a name or a mapping"),
        (grid_with(mechanism="[{C: 1}]"), r"axes\.mechanism\[0\]: must be a name or a mapping"),
        (grid_with(mechanism=None), r"axes\.mechanism: missing required axis 'mechanism'"),
        ("name: x\n", r"axes: missing required key 'axes'"),
        ("", r"the grid file is empty"),
        ("- a\n- b\n", r"a grid file must be a mapping"),
        ("axes: [1]\n", r"axes: must be a mapping"),
        (grid_with() + "name: [x]\n", r"name: must be a non-empty string"),
        (grid_with() + "exclude: {mechanism: mvl}\n", r"exclude: must be a list"),
        (grid_with() + "include:\n  - 3\n", r"include\[0\]: must be a non-empty mapping"),
        (grid_with() + "settings: [1]\n", r"settings: must be a mapping"),
        (grid_with() + "settings: {mia: yes-please}\n", r"settings\.mia: must be true or false"),
        (grid_with() + "settings: {vocab_size: 1}\n", r"settings\.vocab_size: must be an integer"),
        (grid_with() + "settings: {oov: drop}\n", r"settings\.oov: must be one of unk, keep"),
        (grid_with() + "include:\n  - {epsilon: -1}\n", r"include\[0\]\.epsilon: epsilon must be"),
        (grid_with(mechanism="[{name: trlaplace, C: -1}]"),
         r"axes\.mechanism\[0\]: mechanism 'trlaplace': C \(clipping norm\) must be a finite "
         r"number > 0.*refused at every epsilon"),
        (grid_with(mapping="[{name: vickrey, t: 1.5}]"),
         r"axes\.mapping\[0\]: mapping 'vickrey': t must be in \[0, 1\)"),
        ("axes:\n  epsilon: [1\n", r"line \d+, column \d+: invalid YAML"),
        (grid_with() + "axes: {}\n", r"line 9, column 1: invalid YAML: duplicate key 'axes'"),
    ],
)
def test_malformed_grid_errors_name_file_and_key(tmp_path, text, pattern):
    with pytest.raises(GridError, match=r"g\.yaml:? " + pattern):
        load_grid(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(GridError, match=r"nope\.yaml: grid file not found"):
        load_grid(tmp_path / "nope.yaml")
