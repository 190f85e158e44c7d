"""Set-up of the whole-server tests (restarts, stops, saves, the store, masking across
channels, and the package root's modules): ``server``, a ``jupyter server`` process of the
test's own, killed when the test ends, also when it fails. A module that starts it with
options (a store, a contents manager) overrides ``server``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_loop.testing.server_process import ServerProcess


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path)
    yield process
    process.kill()
