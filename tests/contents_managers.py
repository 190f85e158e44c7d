"""Contents managers set into a test server's config (``ServerApp.contents_manager_class``).

Real jupyter_server file managers with one behaviour added, so a test can stop a save at a
chosen point and kill the server there, which no real save can be asked to do:

* :class:`PausingContentsManager`: while ``armed_file`` exists, the next save stops at
  ``pause_at`` (before its first byte, halfway through its bytes, or with all bytes written
  but the save not yet closed), creates ``paused_file`` and waits there for good.
* :class:`DelayedSavesContentsManager`: every notebook save waits ``save_delay`` seconds
  before it writes, and ``written_delay`` seconds once written (before the save returns);
  every read of a notebook's content waits ``read_delay`` seconds: as on a busy machine or a
  slow disk (``saving_file``, ``written_file`` and ``reading_file`` are created when one
  starts waiting; ``returned_file`` when a save that waited written returns).
  ``hooks_delay``: seconds between a notebook's file being written and jupyter_server's
  post-save hooks (``hooks_file`` is created then), the window in which another program
  can write the file before the server reads it back.
  ``rename_delay``: seconds a save waits with its bytes written and not yet renamed into
  place (``rename_file`` is created then), blocking, as a slow disk or a big notebook does.
  ``write_delay``: seconds between a notebook save's pre-save hooks and its write
  (``write_file`` is created then), as on a busy machine: the room has checked the file's
  time, and another program can write the file before the save begins to.
  ``changed_look_delay``: seconds a look at a notebook's time (a read without content, as a
  room's file watcher and its saves make) waits once it has seen the file changed since
  the last look (``changed_look_file`` is created then), as on a busy machine: the room's
  loader holds its lock meanwhile, and a save can queue behind it. ``saves_log``: a file
  each notebook save appends its path to, so a test counts the saves that reached the disk.

Both override only jupyter_server's own methods (``atomic_writing``, ``save``) and reach
the real ones through ``super()``, so whatever layer the server puts under them (jupyter-loop's
saves that cannot tear) still does the writing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from traitlets import Enum, Float, Unicode

PAUSE_POINTS = ("start", "middle", "written")


class PausingFile:
    """A file object whose first write stops at the chosen point."""

    def __init__(self, file: IO[Any], pause_at: str, paused_file: str) -> None:
        self._file = file
        self._pause_at = pause_at
        self._paused_file = paused_file
        self._first = True

    def pause(self) -> None:
        self._file.flush()  # what was written is in the file, as a kill would leave it
        Path(self._paused_file).touch()
        while True:  # until the test kills the server
            time.sleep(1)

    def write(self, data: Any) -> int:
        first, self._first = self._first, False
        if first and self._pause_at == "start":
            self.pause()
        if first and self._pause_at == "middle":
            self._file.write(data[: len(data) // 2])
            self.pause()
        return int(self._file.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class PausingContentsManager(AsyncLargeFileManager):
    armed_file = Unicode("", config=True, help="The next save pauses while this file exists.")
    paused_file = Unicode("", config=True, help="Created when a save has paused.")
    pause_at = Enum(PAUSE_POINTS, "middle", config=True, help="Where the save pauses.")

    @contextmanager
    def atomic_writing(self, os_path: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        armed = bool(self.armed_file) and Path(self.armed_file).exists()
        with super().atomic_writing(os_path, *args, **kwargs) as file:
            if not armed:
                yield file
                return
            Path(self.armed_file).unlink()
            pausing = PausingFile(file, self.pause_at, self.paused_file)
            yield pausing
            if self.pause_at == "written":
                pausing.pause()


class DelayedSavesContentsManager(AsyncLargeFileManager):
    save_delay = Float(0.0, config=True, help="Seconds each notebook save waits first.")
    saving_file = Unicode("", config=True, help="Created when a delayed save starts waiting.")
    written_delay = Float(
        0.0, config=True, help="Seconds each notebook save waits once its file is written."
    )
    written_file = Unicode("", config=True, help="Created when a save waits, written.")
    returned_file = Unicode(
        "", config=True, help="Created when a save that waited, written, returns."
    )
    read_delay = Float(0.0, config=True, help="Seconds each read of a notebook's content waits.")
    reading_file = Unicode("", config=True, help="Created when a delayed read starts waiting.")
    hooks_delay = Float(
        0.0, config=True, help="Seconds between writing a notebook and its post-save hooks."
    )
    hooks_file = Unicode("", config=True, help="Created when a written save waits for its hooks.")
    rename_delay = Float(
        0.0,
        config=True,
        help="Seconds each save waits with its bytes written but not yet in place (blocking).",
    )
    rename_file = Unicode("", config=True, help="Created when a save waits to be put in place.")
    write_delay = Float(
        0.0, config=True, help="Seconds between a notebook save's pre-save hooks and its write."
    )
    write_file = Unicode("", config=True, help="Created when a save waits to write.")
    changed_look_delay = Float(
        0.0, config=True, help="Seconds a look at a notebook's time waits when it changed."
    )
    changed_look_file = Unicode("", config=True, help="Created when a look waits so.")
    saves_log = Unicode(
        "", config=True, help="A file each notebook save appends its path to, as it starts."
    )

    @contextmanager
    def atomic_writing(self, os_path: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with super().atomic_writing(os_path, *args, **kwargs) as file:
            yield file
            if self.rename_delay > 0:
                file.flush()
                if self.rename_file:
                    Path(self.rename_file).touch()
                time.sleep(self.rename_delay)  # another program may write the file meanwhile

    async def _save_notebook(self, os_path: str, nb: Any, *args: Any, **kwargs: Any) -> None:
        if self.write_delay > 0:
            if self.write_file:
                Path(self.write_file).touch()
            await asyncio.sleep(self.write_delay)
        await super()._save_notebook(os_path, nb, *args, **kwargs)
        if self.hooks_delay > 0:
            if self.hooks_file:
                Path(self.hooks_file).touch()
            await asyncio.sleep(self.hooks_delay)

    async def get(self, path: str, content: bool = True, *args: Any, **kwargs: Any) -> Any:
        if content and self.read_delay > 0 and path.endswith(".ipynb"):
            if self.reading_file:
                Path(self.reading_file).touch()
            await asyncio.sleep(self.read_delay)
        model = await super().get(path, content, *args, **kwargs)
        if not content and self.changed_look_delay > 0 and path.endswith(".ipynb"):
            looked = self.__dict__.setdefault("_looked_at", {})
            changed = path in looked and looked[path] != model["last_modified"]
            looked[path] = model["last_modified"]
            if changed:
                if self.changed_look_file:
                    Path(self.changed_look_file).touch()
                await asyncio.sleep(self.changed_look_delay)
        return model

    async def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        notebook = model.get("type") == "notebook"
        if notebook and self.saves_log:
            with open(self.saves_log, "a", encoding="utf-8") as log:
                log.write(f"{path}\n")
        if notebook and self.save_delay > 0:
            if self.saving_file:
                Path(self.saving_file).touch()
            await asyncio.sleep(self.save_delay)
        saved = dict(await super().save(model, path))
        if notebook and self.written_delay > 0:
            if self.written_file:
                Path(self.written_file).touch()
            await asyncio.sleep(self.written_delay)
            if self.returned_file:
                Path(self.returned_file).touch()
        return saved
