"""Which notebook a request means: its path made canonical, its file id, its room.

``./nb.ipynb``, ``nb.ipynb/`` and ``dir/../nb.ipynb`` are the same notebook, so they must
give the same file id and the same room: two rooms on one file overwrite each other.

Example:
    >>> canonical_path("dir/../sub/./nb.ipynb/")
    'sub/nb.ipynb'
    >>> ref = NotebookRef("sub/nb.ipynb", "f1")
    >>> ref.room_id
    'json:notebook:f1'
    >>> NotebookRef.of_room("json:notebook:f1").file_id
    'f1'
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..errors import BadRequest

_ROOM_PREFIX = "json:notebook:"


def canonical_path(path: str) -> str:
    """``path`` inside the server's root, normalised; :class:`BadRequest` if it is not one."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadRequest("The path is not valid text (it holds a lone surrogate).") from e
    if "\0" in path:
        raise BadRequest("The path holds a NUL character.")
    normal = posixpath.normpath(path) if path else ""
    if not normal or normal == "." or normal.startswith(("/", "../")) or normal == "..":
        raise BadRequest(f"'{path}' is not a path inside the server's root directory.")
    return normal


@dataclass(frozen=True)
class NotebookRef:
    """A notebook: its canonical path (when known), its file id, and so its room."""

    path: str
    file_id: str

    @property
    def room_id(self) -> str:
        """The jupyter_server_ydoc room of the notebook."""
        return f"{_ROOM_PREFIX}{self.file_id}"

    @classmethod
    def of_room(cls, room_id: str, path: str = "") -> NotebookRef:
        return cls(path, room_id.removeprefix(_ROOM_PREFIX))

    @staticmethod
    def is_notebook_room(room_id: str) -> bool:
        """Whether a room holds a notebook (not a text file, not the awareness room).

        >>> NotebookRef.is_notebook_room("json:notebook:f1")
        True
        >>> NotebookRef.is_notebook_room("text:file:f2")
        False
        """
        return room_id.startswith(_ROOM_PREFIX)
