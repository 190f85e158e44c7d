"""Files and directories only their owner may read (conversations, journals, outputs).

What a notebook printed and what was said to the agent may hold secrets: on a shared
machine they must not be readable by other users, whatever the umask.

Example:
    >>> import stat, tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> folder = private_dir(root / "a" / "b")
    >>> with open_private(folder / "notes", "w") as stream:
    ...     _ = stream.write("hi")
    >>> mode = lambda path: oct(stat.S_IMODE(path.stat().st_mode))
    >>> mode(folder / "notes"), mode(folder), mode(root / "a")
    ('0o600', '0o700', '0o700')
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents, each readable by the owner only."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(directory, DIR_MODE)  # mkdir's mode is narrowed by the umask, not set
    return path


def _opener(path: str, flags: int) -> int:
    return os.open(path, flags, FILE_MODE)


def open_private(path: Path, mode: str, **kwargs: Any) -> IO[Any]:
    """``open(path, mode)``; a file it creates is readable by the owner only."""
    return open(path, mode, opener=_opener, **kwargs)
