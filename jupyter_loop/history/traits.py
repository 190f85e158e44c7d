"""How much of the past the server keeps, mixed into ``JupyterLoopApp``
(``c.JupyterLoopApp.*``): the run history of every cell, and the saved versions of every
notebook.
"""

from __future__ import annotations

from traitlets import Bool, Int
from traitlets.config import Configurable


class HistoryConfig(Configurable):
    """The run history's and the kept versions' bounds."""

    history = Bool(
        True,
        config=True,
        help=(
            "Keep a history of every run of every cell (who started it, through what, the "
            "source it ran, how it ended) in history.sqlite3 in the data directory "
            "(default True)."
        ),
    )

    history_max_runs_per_cell = Int(
        1000,
        config=True,
        help="Runs of one cell the run history keeps, the newest (default 1000).",
    )

    history_max_bytes = Int(
        64 * 1024 * 1024,
        config=True,
        help=(
            "Bytes the run history's database may take; over it, the oldest runs go "
            "(default 67108864, 64 MiB)."
        ),
    )

    versions_max = Int(
        50,
        config=True,
        help=(
            "Versions of each notebook kept in versions.sqlite3 in the data directory: the "
            "file at each save of the server, and as found on disk before a save replaced "
            "it (default 50; 0 keeps none). `jupyter loop versions` lists them, `jupyter "
            "loop restore` brings one back."
        ),
    )

    versions_max_bytes = Int(
        256 * 1024 * 1024,
        config=True,
        help=(
            "Bytes (compressed) the kept versions of all notebooks may take; over it, the "
            "oldest go, never a notebook's newest (default 268435456, 256 MiB)."
        ),
    )
