"""The MCP host matrix (``jupyter_loop.testing.host_matrix``) on a server of its own:
connect, list, read text, image, resource, run, task, propose, scope refusal and error
text, over every MCP client library installed here, printed as a ✔/✘ table. Run:

    python bench/mcp_hosts.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from jupyter_loop.testing.host_matrix import matrix, prepare, table
from jupyter_loop.testing.server_process import TOKEN, ServerProcess


async def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="mcp-hosts-"))
    server = ServerProcess(home, "--JupyterLoopApp.approval_policy=always")
    server.start()
    try:
        await server.ready()
        target = await prepare(server.root, server.url(), TOKEN)
        print(table(await matrix(target)))
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
