"""``jupyter loop versions NOTEBOOK`` and ``jupyter loop restore NOTEBOOK VERSION``.

One line per kept version, newest first: its number (what ``restore`` takes), when it was
saved, what it is (a save, a file found on disk before a save replaced it, a restore) and
its size; ``restore`` brings one back and says how to undo it: into the file (restore the
version it replaced), or, when the notebook is open in a tab, as a proposal at the top of the
notebook that a tab accepts (undo there takes it back); ``--now`` puts it into the open
notebook at once.
"""

from __future__ import annotations

import time
from typing import Any, TextIO
from urllib.parse import urlencode

from .connection import Api
from .render import DIM, Style, visible

VERSIONS = ("api", "jupyter-loop", "versions")


async def versions_command(api: Api, path: str, out: TextIO) -> int:
    reply = await api.call(*VERSIONS, query=urlencode({"path": path}))
    style = Style(tty=out.isatty())
    if not reply["versions"]:
        out.write("No versions kept.\n")
    for version in reply["versions"]:
        out.write(version_line(version, style) + "\n")
    return 0


async def restore_command(api: Api, path: str, number: str, now: bool, out: TextIO) -> int:
    from .connection import CliError

    if not number.isdigit():
        raise CliError(f"VERSION must be a version's number (see jupyter loop versions): {number}")
    body = {"path": path, "now": now}
    reply = await api.call(*VERSIONS, number, "restore", method="POST", body=body)
    if reply.get("proposal"):
        out.write(
            f"{visible(path)} is open: version {number} is proposed at the top of the "
            "notebook. Accept it there (undo there takes it back), or run again with --now.\n"
        )
        return 0
    where = "in the open notebook" if reply["live"] else "into the file"
    out.write(f"Restored version {number} of {visible(path)} {where}.\n")
    # Asked after the restore, not before: the restore keeps what it replaces first (the
    # room's content, or a file another program wrote, "found on disk"), and that version
    # is the one to go back to.
    after = await api.call(*VERSIONS, query=urlencode({"path": path}))
    replaced = next((v["number"] for v in after["versions"] if v["kind"] != "restored"), None)
    if replaced is not None and str(replaced) != number:
        out.write(f"To undo: jupyter loop restore {visible(path)} {replaced}\n")
    return 0


def version_line(version: dict[str, Any], style: Style) -> str:
    """``  12  2026-11-27 05:40:01  saved  3 cells  1.2 KiB``.

    Example:
        >>> line = version_line({"number": 7, "saved": 0, "kind": "restored",
        ...     "restored_from": 3, "cells": 2, "size": 2048}, Style(tty=False))
        >>> line
        '   7  1970-01-01 00:00:00  restored from 3  2 cells  2.0 KiB'
    """
    saved = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(float(version["saved"])))
    kind = visible(str(version["kind"]))
    if version.get("restored_from") is not None:
        kind += f" from {int(version['restored_from'])}"
    cells = int(version["cells"])
    return (
        f"{int(version['number']):4d}  {saved}  {kind}  "
        + f"{cells} cell{'s' if cells != 1 else ''}  "
        + style.paint(size_text(int(version["size"])), DIM)
    )


def size_text(size: int) -> str:
    """Example:
    >>> size_text(512), size_text(1536), size_text(3 * 1024 * 1024)
    ('512 B', '1.5 KiB', '3.0 MiB')
    """
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"
