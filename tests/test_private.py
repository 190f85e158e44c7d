"""Private files and directories, whatever the umask."""

from __future__ import annotations

import doctest
import os
import stat

from jupyter_loop import private
from jupyter_loop.private import open_private, private_dir


def test_examples():
    assert doctest.testmod(private).failed == 0


def test_a_permissive_umask_does_not_widen_them(tmp_path):
    old = os.umask(0)
    try:
        folder = private_dir(tmp_path / "x" / "y")
        with open_private(folder / "f", "ab") as stream:
            stream.write(b"1")
    finally:
        os.umask(old)
    modes = [stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "x", folder, folder / "f")]
    assert modes == [0o700, 0o700, 0o600]
