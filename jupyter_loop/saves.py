"""Saves that cannot tear: a notebook on disk is always the old version or the new one.

jupyter_server's ``use_atomic_writing`` copies a file to a ``.~name`` backup, then
truncates the file and writes the new bytes into it. A server killed in between leaves an
empty or half-written ``.ipynb`` (jupyter_server itself restores the backup at its next
read, but git, nbconvert, a sync client or another editor read the broken file), and a
contents API read that comes while a save is writing gets ``400 Unreadable Notebook``.
jupyter-loop saves far more often than stock JupyterLab (while cells print, and after each
run), so that window is open much of the time.

Here a save writes a new file beside the target (same directory, so same file system),
flushes and ``fsync``s it, gives it the target's permission bits (and owner, where
allowed), renames it over the target with ``os.replace`` (atomic on POSIX and Windows)
and ``fsync``s the directory so the rename itself survives a power cut. A reader opens
either the old file or the new one, whole. A file that another program replaced while the
save was being written is not renamed over: the save fails with a 409 and the file stays
as that program left it, for the room to reload. So is a file that a check set by a
service refuses just before the rename (:meth:`ReplacingSavesMixin.check_before_replacing`):
a ``git checkout`` in the moment between the room's check of the file's time and the start
of the write is seen only by what knows the room (``document.file_guards.missed_reloads``).

Everything else stays jupyter_server's: the layer overrides only
``FileManagerMixin.atomic_writing``, the one place both the sync and the async file
managers write through (``_save_notebook``, ``_save_file``), so checkpoints, pre/post save
hooks, hashing and validation are untouched. It keeps jupyter_server's behaviour where a
rename would be wrong:

* ``use_atomic_writing = False`` writes in place, as jupyter_server does (some network
  file systems do not order a rename after the writes);
* a symlinked file is written through to its target; the link stays a link;
* a file with other hard links, or in a directory we may not create files in, is written
  by jupyter_server's own in-place ``atomic_writing`` (a rename would cut the hard link or
  is not possible);
* a file we may not write stays a 403, as before (a rename could replace it anyway).

Rejected: overriding ``_save_notebook``/``_save_file`` to run the whole save in a thread.
The mixin sits *under* a user's subclass in the method order (see :func:`with_replacing_saves`)
so that their overrides keep working, and it would have had to copy jupyter_server's
encoding and validation code. The closing ``fsync`` and rename run on the event loop, as
jupyter_server's closing ``fsync`` does.

A save cut off by a kill leaves its temporary file behind (hidden: ``.~name.*.saving``);
the first save of the same file by a later server process removes those older than
``STALE_TEMP_SECONDS``.

Example:
    >>> from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
    >>> with_replacing_saves(AsyncLargeFileManager) is ReplacingAsyncLargeFileManager
    True
    >>> from jupyter_server.services.contents.manager import AsyncContentsManager
    >>> with_replacing_saves(AsyncContentsManager) is AsyncContentsManager  # not file-based
    True
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from typing import IO, Any, TypeVar, cast

from jupyter_server.serverapp import ServerApp
from jupyter_server.services.contents.fileio import FileManagerMixin, atomic_writing
from jupyter_server.services.contents.filemanager import AsyncFileContentsManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from tornado.web import HTTPError

from .reads import WaitingReads

Manager = TypeVar("Manager")
TEMP_SUFFIX = ".saving"
FileStamp = tuple[int, int, int]
"""``(st_mtime_ns, st_size, st_ino)``: a file as a save left it."""

BeforeReplace = Callable[[str, "FileStamp | None", FileStamp], None]
"""A step just before a save is renamed over ``os_path``, given the file as it is now
(``None``: no file) and as the rename will leave it; a check refuses the save by raising
``HTTPError`` (a 409)."""


def file_stamp(os_path: str) -> FileStamp | None:
    """The file's :data:`FileStamp` now (``None``: there is no such file)."""
    try:
        return _stamp_of(os.stat(os_path))
    except OSError:
        return None


def _stamp_of(status: os.stat_result | None) -> FileStamp | None:
    return None if status is None else (status.st_mtime_ns, status.st_size, status.st_ino)


def written_stamp(contents_manager: Any, os_path: str) -> FileStamp | None:
    """How ``contents_manager``'s last save of ``os_path`` left the file, if it is ours
    (:meth:`ReplacingSavesMixin.written_stamp`) and renamed a new file over it."""
    ask = getattr(contents_manager, "written_stamp", None)
    return ask(os_path) if callable(ask) else None


STALE_TEMP_SECONDS = 600.0  # no save takes this long: a temp file this old was cut off
_swept: set[str] = set()  # files whose cut-off temps this process has looked for


def temp_prefix(target: str) -> str:
    """Hidden, and ``.~`` like jupyter_server's backup so sync clients (Dropbox) skip it,
    but never jupyter_server's backup name (its reader would restore from it)."""
    return ".~" + os.path.basename(target) + "."


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable; file systems (and Windows) that cannot
    ``fsync`` a directory keep the rename as their own guarantees allow."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temps(target: str, older_than: float = STALE_TEMP_SECONDS) -> None:
    """Remove temp files of saves of ``target`` cut off by a kill (not those in flight)."""
    directory, prefix = os.path.dirname(target), temp_prefix(target)
    cutoff = time.time() - older_than
    with suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX):
                with suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)


def create_temp(target: str) -> tuple[int, str]:
    """A new file beside ``target``, created with mode 0o666 so the process umask applies
    to a new notebook as it would to ``open(path, "w")`` (``mkstemp`` would make it 0o600)."""
    directory = os.path.dirname(target)
    while True:
        name = f"{temp_prefix(target)}{secrets.token_hex(4)}{TEMP_SUFFIX}"
        path = os.path.join(directory, name)
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), path
        except FileExistsError:
            continue


def take_over_attributes(fd: int, original: os.stat_result, log: Any = None) -> None:
    """The new file keeps the old one's permission bits, and its owner where we may."""
    os.fchmod(fd, stat.S_IMODE(original.st_mode))
    if (original.st_uid, original.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, original.st_uid, original.st_gid)
        except OSError:
            if log is not None:
                log.debug("jupyter-loop could not keep the owner of a saved file", exc_info=True)


@contextmanager
def replacing_writing(
    path: str,
    text: bool = True,
    encoding: str = "utf-8",
    log: Any = None,
    written: Callable[[FileStamp], None] | None = None,
    before_replace: Callable[[FileStamp | None, FileStamp], None] | None = None,
    **kwargs: Any,
) -> Iterator[IO[Any]]:
    """Write ``path`` through a temporary file renamed over it once whole and synced;
    ``before_replace`` may refuse the rename (it raises), given the file as it is then and
    the :data:`FileStamp` the rename will leave;
    ``written`` is told the :data:`FileStamp` the rename left (neither is called for a
    file written in place)."""
    target = os.path.realpath(path)  # through symlinks, to the file they point to
    directory = os.path.dirname(target)
    try:
        original: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        original = None
    if original is not None and (
        original.st_nlink > 1 or not os.access(directory, os.W_OK | os.X_OK)
    ):
        with atomic_writing(target, text=text, encoding=encoding, log=log, **kwargs) as in_place:
            yield in_place
        return
    if original is not None and not os.access(target, os.W_OK):
        # jupyter_server refuses it too (its backup copy); a rename would not notice.
        raise PermissionError(errno.EACCES, f"File is not writable: {target}", target)
    if target not in _swept:  # once per file and process: a scan per save would cost
        _swept.add(target)
        remove_stale_temps(target)
    fd, temp = create_temp(target)
    try:
        if original is not None and hasattr(os, "fchmod"):
            take_over_attributes(fd, original, log)
        if text:
            kwargs.setdefault("newline", "\n")  # Unix line ends, as jupyter_server writes
            file: IO[Any] = open(fd, "w", encoding=encoding, **kwargs)  # noqa: SIM115
        else:
            file = open(fd, "wb", **kwargs)  # noqa: SIM115
        with file:
            yield file
            file.flush()
            os.fsync(file.fileno())
            status = os.fstat(file.fileno())  # a rename keeps mtime, size and inode
        new = (status.st_mtime_ns, status.st_size, status.st_ino)
        found = file_stamp(target)
        if found != _stamp_of(original):
            raise HTTPError(
                409,
                f"{os.path.basename(target)} changed on disk while it was being saved "
                "(another program wrote it); it was left as that program wrote it.",
            )
        if before_replace is not None:
            before_replace(found, new)
        os.replace(temp, target)  # no await since the checks: nothing of ours runs between
        if written is not None:
            written(new)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise
    fsync_directory(directory)


class ReplacingSavesMixin(FileManagerMixin):
    """Put under a file contents manager: its saves write a new file and rename it over
    the old one (see the module's docstring); ``use_atomic_writing = False`` writes in
    place, as jupyter_server does."""

    @contextmanager
    def atomic_writing(self, os_path: str, *args: Any, **kwargs: Any) -> Iterator[IO[Any]]:
        stamps = self._written_stamps()
        stamps.pop(os_path, None)
        if not self.use_atomic_writing:
            with super().atomic_writing(os_path, *args, **kwargs) as file:
                yield file
            return
        with self.perm_to_403(os_path):
            kwargs["log"] = self.log
            kwargs["written"] = partial(stamps.__setitem__, os_path)
            kwargs["before_replace"] = partial(self._check_before_replacing, os_path)
            with replacing_writing(os_path, *args, **kwargs) as file:
                yield file

    before_replacing: tuple[BeforeReplace, ...] = ()

    def check_before_replacing(self, check: BeforeReplace) -> None:
        """Run ``check`` just before each save is renamed into place (see
        :data:`BeforeReplace`): the last moment another program's write can be told apart,
        and the first at which the file the save leaves is known."""
        self.before_replacing = (*self.before_replacing, check)

    def _check_before_replacing(
        self, os_path: str, found: FileStamp | None, new: FileStamp
    ) -> None:
        for check in self.before_replacing:
            check(os_path, found, new)

    def written_stamp(self, os_path: str) -> FileStamp | None:
        """How this manager's last save of ``os_path`` left the file, if it renamed a new
        file over it: a post-save hook that finds another stamp knows that another program
        wrote the file in between (``versions.keeper``). ``None`` after a write in place."""
        return self._written_stamps().get(os_path)

    def _written_stamps(self) -> dict[str, FileStamp]:
        # Not a trait or an __init__: the mixin goes under classes it does not know.
        stamps: dict[str, FileStamp] = self.__dict__.setdefault("_loop_written_stamps", {})
        return stamps


class ReplacingAsyncLargeFileManager(  # type: ignore[misc]  # jupyter_server's own bases disagree
    WaitingReads, AsyncLargeFileManager, ReplacingSavesMixin
):
    """jupyter_server's default contents manager with saves that cannot tear, and reads
    that wait for the steps jupyter-loop's services set (see ``reads``)."""


def with_replacing_saves(manager: type[Manager]) -> type[Manager]:
    """``manager`` with :class:`ReplacingSavesMixin` under it, if it writes files.

    The mixin goes *last* among the bases: Python's method order then places it just
    above ``FileManagerMixin``, below every class of ``manager``, so a user's own
    ``atomic_writing`` (or ``_save_notebook``) still runs first and reaches ours through
    ``super()``. Contents managers that do not write local files (S3, databases) are
    returned as they are.
    """
    if not issubclass(manager, FileManagerMixin) or issubclass(manager, ReplacingSavesMixin):
        return manager
    if manager is AsyncLargeFileManager:
        return cast("type[Manager]", ReplacingAsyncLargeFileManager)
    # Same name, so the server's log and ``--help`` read as the user's class.
    # The waiting reads go first: they wrap ``get``, which the file managers define.
    first: tuple[type, ...] = ()
    if issubclass(manager, AsyncFileContentsManager):
        first = (WaitingReads,)
    bases = (*first, manager, ReplacingSavesMixin)
    derived = type(manager.__name__, bases, {"__module__": __name__})
    return cast("type[Manager]", derived)


def choose_replacing_saves(server: ServerApp) -> None:
    """Give the server's contents manager saves that cannot tear, whichever file manager
    it is (the default or a user's subclass).

    Called when jupyter-loop is linked: the server creates its contents manager later
    (``init_configurables``), from ``ServerApp.contents_manager_class`` as configured.
    """
    chosen = server.contents_manager_class
    replacing = with_replacing_saves(chosen)
    if replacing is chosen:
        if not issubclass(chosen, ReplacingSavesMixin):
            server.log.info(
                "jupyter-loop: %s does not write local files; its saves are its own",
                chosen.__name__,
            )
        return
    # In the config too: the server reloads its traits from its config once more after
    # linking (for its starter extension), which would bring the user's class back.
    server.config.ServerApp.contents_manager_class = replacing
    server.contents_manager_class = replacing


__all__ = [
    "BeforeReplace",
    "ReplacingAsyncLargeFileManager",
    "ReplacingSavesMixin",
    "choose_replacing_saves",
    "file_stamp",
    "replacing_writing",
    "with_replacing_saves",
    "written_stamp",
]
