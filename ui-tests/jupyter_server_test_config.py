"""JupyterLab server for the browser tests: galata's settings plus jupyter-loop's."""

import os
import tempfile
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the config object of this file)

c.ServerApp.ip = "127.0.0.1"
c.ServerApp.port = int(os.environ.get("LOOP_UI_PORT", "8888"))
# Short delays, so a closed tab's room would be evicted within a test if it were not pinned.
c.YDocExtension.document_cleanup_delay = 5
c.JupyterLoopApp.save_interval = 1.0
c.ServerApp.allow_root = True  # CI runs as root

# Keep the server's databases out of the source tree.
_state = Path(tempfile.mkdtemp(prefix="jupyter-loop-ui-state-"))
c.SQLiteYStore.db_path = str(_state / "ystore.db")
c.BaseFileIdManager.db_path = str(_state / "fileid.db")
