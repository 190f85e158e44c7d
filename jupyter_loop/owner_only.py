"""Files and directories only their owner may read (conversations, journals, outputs).

What a notebook printed and what was said to the agent may hold secrets: on a shared
machine they must not be readable by other users, whatever the umask. Files written
before they were made private keep the modes they had: :func:`tighten` takes group and
other rights away from them when the server starts.

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
import stat
import tempfile
from pathlib import Path
from typing import IO, Any

FILE_MODE = 0o600
DIR_MODE = 0o700
OTHERS = 0o077
"""Rights of the group and of others."""


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


def tighten(root: Path) -> list[Path]:
    """Take group and other rights away from ``root`` and everything under it; returns what
    changed (what could not be changed is left as it is).

    Only rights are taken, never given, and the owner's are kept, so a data directory
    configured somewhere unusual loses nothing its owner needs. Symbolic links are not
    followed (their targets are not ours), and entries of other users are left alone.
    Setting exact modes (0700/0600) was the alternative; it would also take away an
    owner's execute bit from a file that had one.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "old").write_text("x"); (root / "old").chmod(0o644)
        1
        >>> [path.name for path in tighten(root)], oct(stat.S_IMODE((root / "old").stat().st_mode))
        (['old'], '0o600')
    """
    if os.name != "posix" or not root.is_dir():
        return []
    changed: list[Path] = []
    for folder, _, files in os.walk(root):  # never into a linked folder
        here = Path(folder)
        for path in (here, *(here / name for name in files)):
            if _take_others_rights(path):
                changed.append(path)
    return changed


def _take_others_rights(path: Path) -> bool:
    try:
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode) or status.st_uid != os.getuid():
            return False
        mode = stat.S_IMODE(status.st_mode)
        if not mode & OTHERS:
            return False
        os.chmod(path, mode & ~OTHERS)
    except OSError:
        return False
    return True


def _opener(path: str, flags: int) -> int:
    return os.open(path, flags, FILE_MODE)


def open_private(path: Path, mode: str, **kwargs: Any) -> IO[Any]:
    """``open(path, mode)``; a file it creates is readable by the owner only."""
    return open(path, mode, opener=_opener, **kwargs)


def replace_private(path: Path, text: str) -> None:
    """Write ``text`` as the whole of ``path``, owner-only, at once: a reader (or the next
    server, after a kill) sees the old file or the new one, never half of one."""
    private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")  # made 0o600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
