"""One notebook, one reference: canonical paths, file ids and room ids."""

from __future__ import annotations

import pytest

from jupyter_loop.document.reference import NotebookRef, canonical_path
from jupyter_loop.errors import BadRequest


@pytest.mark.parametrize(
    "path", ["nb.ipynb", "./nb.ipynb", "nb.ipynb/", "dir/../nb.ipynb", "a//../nb.ipynb"]
)
def test_spellings_of_one_path_are_one_path(path):
    assert canonical_path(path) == "nb.ipynb"


@pytest.mark.parametrize("path", ["", ".", "..", "../nb.ipynb", "/nb.ipynb", "\ud800", "a\0b"])
def test_paths_outside_the_root_or_not_text_are_refused(path):
    with pytest.raises(BadRequest):
        canonical_path(path)


def test_a_room_id_and_its_file_id_go_both_ways():
    ref = NotebookRef("nb.ipynb", "0e9c-41")
    assert NotebookRef.of_room(ref.room_id).file_id == ref.file_id
