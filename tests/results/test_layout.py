"""bench.results.layout.check_results: a folder without cells/ is bad input; one whose cells/,
damaged/ or locks/ is a symbolic link is refused before anything is written through it."""

from __future__ import annotations

import pytest

from bench.errors import InputError
from bench.results.layout import NoResultsError, UnsafeResultsError, check_results


def test_a_folder_without_cells_is_no_results(tmp_path):
    with pytest.raises(NoResultsError, match="no results under") as e:
        check_results(tmp_path)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, InputError)


@pytest.mark.parametrize("sub", ["cells", "damaged", "locks"])
def test_a_symlinked_sub_folder_is_refused_for_writing(tmp_path, sub):
    results, outside = tmp_path / "r", tmp_path / "outside"
    outside.mkdir()
    results.mkdir()
    if sub != "cells":
        (results / "cells").mkdir()
    (results / sub).symlink_to(outside, target_is_directory=True)
    assert check_results(results) == results  # reading: cells/ is a folder
    with pytest.raises(UnsafeResultsError, match="is a symbolic link"):
        check_results(results, writes=True)


def test_a_sound_folder_passes(tmp_path):
    (tmp_path / "cells").mkdir()
    assert check_results(str(tmp_path), writes=True) == tmp_path
