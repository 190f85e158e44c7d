"""Owner-only files and directories, whatever the umask."""

from __future__ import annotations

import os
import stat

from jupyter_loop import owner_only
from jupyter_loop.owner_only import open_private, private_dir


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


def test_tighten_takes_rights_away_only_from_group_and_others(tmp_path):
    root, outside = tmp_path / "state", tmp_path / "outside"
    (root / "runs").mkdir(parents=True)
    outside.write_text("not ours")
    (root / "runs" / "run.sh").write_text("#!/bin/sh\n")
    (root / "runs" / "link").symlink_to(outside)
    ours = (root, root / "runs", root / "runs" / "run.sh")
    for path, loose in zip(ours, (0o755, 0o775, 0o755), strict=True):
        path.chmod(loose)
    outside.chmod(0o644)
    changed = owner_only.tighten(root)
    modes = [stat.S_IMODE(p.stat().st_mode) for p in ours]
    assert (modes, len(changed)) == ([0o700, 0o700, 0o700], 3)  # the owner keeps execute
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link is not followed
    assert owner_only.tighten(root) == []  # nothing left to do
