"""`bench validate`: the summary text and the CLI exit codes."""

from __future__ import annotations

from bench.grid import (
    cli_validate,
    validate_text,
)

from .helpers import (
    grid_with,
    write,
)

# --------------------------------------------------------------------------- validate / CLI


def test_validate_text_and_cli(tmp_path):
    p = write(tmp_path, grid_with(mechanism="[mvl, tem]", mapping="[nearest]"))
    text, code = cli_validate(p)
    assert code == 0
    assert "2 cells (1 baseline), 1 skipped" in text
    assert "mechanism 'tem' selects output words itself" in text
    assert "bbc:model=lstm,mech=tem,sens=none,map=nearest,eps=1,seed=0" in text
    assert validate_text(p) == text
    assert "cells:" in validate_text(p, verbose=True)
    text, code = cli_validate(write(tmp_path, grid_with(mechanism="[mvll]"), "bad.yaml"))
    assert code == 2
    assert "bad.yaml: axes.mechanism[0]: unknown mechanism 'mvll'; did you mean 'mvl'" in text
