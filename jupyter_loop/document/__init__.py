"""The one path into jupyter_server_ydoc's live shared notebooks."""

from .cells import CellNotFound, code_cell, find_cell, find_cells, set_source, source_hash
from .live import LiveDocuments
from .reference import NotebookRef, canonical_path
from .writing import ORIGIN, writing

__all__ = [
    "ORIGIN",
    "CellNotFound",
    "LiveDocuments",
    "NotebookRef",
    "canonical_path",
    "code_cell",
    "find_cell",
    "find_cells",
    "set_source",
    "source_hash",
    "writing",
]
