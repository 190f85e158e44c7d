"""What ``keep_kernels`` sets in the server's configuration (at link time, before the
server builds its kernel and session managers).

- the default provisioner: ours (kernel specs naming a provisioner keep theirs; an admin
  who chose a default keeps it);
- where keepers keep their files, their orphan timeout, journal bound and masking;
- ``SessionManager.database_filepath``: jupyter_server keeps sessions in memory by
  default; on disk, a notebook's session (and its id, which open tabs hold) comes back
  with its adopted kernel. Sessions whose kernel is gone are dropped by jupyter_server
  itself when listed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_client.provisioning import KernelProvisionerFactory
from traitlets.config import Config

from ..owner_only import FILE_MODE, open_private, private_dir
from .provisioner import NAME, register


def kernels_root(data_dir: Path) -> Path:
    """Where the kept kernels' directories are (``<data_dir>/kernels``)."""
    return data_dir / "kernels"


def keep_kernels_config(
    config: Config,
    data_dir: Path,
    *,
    orphan_timeout: float,
    max_journal_bytes: int,
    masking: dict[str, Any],
) -> None:
    register()
    factory = config.KernelProvisionerFactory
    chosen = os.environ.get(KernelProvisionerFactory.default_provisioner_name_env)
    if "default_provisioner_name" not in factory and not chosen:
        factory.default_provisioner_name = NAME
    keeper = config.KeeperProvisioner
    keeper.directory = str(private_dir(kernels_root(data_dir)))
    keeper.orphan_timeout = orphan_timeout
    keeper.max_journal_bytes = max_journal_bytes
    keeper.masking = masking
    sessions = config.SessionManager
    if "database_filepath" not in sessions:
        sessions.database_filepath = str(private_sessions_db(data_dir))


def private_sessions_db(data_dir: Path) -> Path:
    """The sessions database, created owner-only (SQLite would create it 0644; its
    journal files take the database's mode). An empty file is a valid new database."""
    path = private_dir(data_dir) / "sessions.db"
    with open_private(path, "ab"):
        pass
    os.chmod(path, FILE_MODE)
    return path
