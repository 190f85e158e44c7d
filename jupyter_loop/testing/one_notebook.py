"""All of ``LiveDocuments`` that a ``CellWriter`` uses, over one in-memory notebook.

For exercising the writer alone (its tests, ``bench/writer_memory.py``): no server, no
room, no saves.
"""

from __future__ import annotations

from jupyter_ydoc import YNotebook


class NoSaves:
    """Saves of a notebook with no file: none."""

    async def save_if_due(self, room_id: str, since: float | None = None) -> None:
        return None


class OneNotebook:
    """Serves one in-memory notebook as the live room of every id."""

    def __init__(self, notebook: YNotebook) -> None:
        self._notebook = notebook
        self.saves = NoSaves()

    async def notebook(self, room_id: str) -> YNotebook:
        return self._notebook

    def overwrites(self, room_id: str) -> int:
        return 0  # no file: never reloaded from one

    def overwritten_at(self, room_id: str) -> float | None:
        return None
