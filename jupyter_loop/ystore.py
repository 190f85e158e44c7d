"""A YStore that stays small under notebooks that print a lot.

jupyter-collaboration keeps every Y update of a document in its SQLite store unless told
otherwise, and a cell that prints adds its outputs' updates on every run: a 100,000-line
loop grew the store by about 85 KB per run, for good. This store is jupyter-collaboration's
own ``SQLiteYStore`` with the store's own squashing switched on: history older than
``squash_history_older_than`` seconds is merged into one update, at most every
``squash_no_more_often_than`` seconds. Undo in a tab does not read the store (it lives in
the tab), so only the timeline of older states is coarser.

pycrdt-store applies the updates it squashes only through its decompression hook, so
without one a squash would store an empty document: the store registers identity hooks
(compression itself is not used, as pycrdt-store 0.1.5 loads rooms without decompressing).

Example:
    >>> unchanged(b"an update")
    b'an update'
"""

from __future__ import annotations

from typing import Any

from jupyter_server_ydoc.stores import SQLiteYStore
from traitlets import Int


def unchanged(update: bytes) -> bytes:
    return update


class CompactSQLiteYStore(SQLiteYStore):
    """jupyter-collaboration's SQLite store with bounded history."""

    # Rooms that jupyter-loop opens with no tab connected get a store built without the
    # server's configuration (jupyter-collaboration's get_document): the defaults below
    # are what they use.
    squash_history_older_than = Int(
        30,
        allow_none=True,
        config=True,
        help=(
            "Seconds of document history kept update by update (default 30); older history "
            "is merged into one update. None keeps every update."
        ),
    )

    squash_no_more_often_than = Int(
        15, config=True, help="Seconds between two squashes of a document's history (default 15)."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register_compression_callbacks(unchanged, unchanged)
