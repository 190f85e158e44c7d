"""Seconds the terminal client and the server extension take to start.

Each figure is a whole process, timed from spawn to exit, rounds interleaved:

* ``jupyter loop --help``, through the ``jupyter`` launcher as a user types it (goal 0.3 s);
* ``jupyter loop status`` against a real server found in Jupyter's runtime files, as a
  user with one running server does (goal 0.6 s);
* ``python -c "import jupyter_loop"`` and, for scale, ``python -c "pass"``;
* the extension's share of a server's start: in one process that has already imported
  ``jupyter_server.serverapp`` and jupyter-collaboration, the seconds ``import
  jupyter_loop.app`` takes (goal 0.3 s). The server log's "jupyter_loop took X s to import"
  times only ``import jupyter_loop``, which no longer loads the app; the app is then
  imported by ``_jupyter_server_extension_points``, so this figure is the honest one.

Usage: ``python bench/cli_startup.py [rounds]`` (default 7). Prints medians (and the
slowest run) and each median's ratio to its goal.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_loop.testing.server_process import ServerProcess

JUPYTER = str(Path(sys.executable).parent / "jupyter")
EXTENSION_SHARE = (
    "import time, jupyter_server.serverapp, jupyter_server_ydoc, jupyter_collaboration\n"
    "start = time.perf_counter()\n"
    "import jupyter_loop.app\n"
    "print(time.perf_counter() - start)"
)
GOALS = {"jupyter loop --help": 0.3, "jupyter loop status": 0.6, "extension import": 0.3}


def whole_process(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def extension_share(env: dict[str, str]) -> float:
    command = [sys.executable, "-c", EXTENSION_SHARE]
    result = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return float(result.stdout.strip())


async def main(rounds: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="loop-cli-startup-"))
    server = ServerProcess(home)
    server.start()
    try:
        await server.ready()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(sys.path),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        measures = {
            "python -c pass": lambda: whole_process([sys.executable, "-c", "pass"], env),
            'python -c "import jupyter_loop"': lambda: whole_process(
                [sys.executable, "-c", "import jupyter_loop"], env
            ),
            "jupyter loop --help": lambda: whole_process([JUPYTER, "loop", "--help"], env),
            "jupyter loop status": lambda: whole_process([JUPYTER, "loop", "status"], env),
            "extension import": lambda: extension_share(env),
        }
        for measure in measures.values():  # warm the file cache once, untimed
            measure()
        seconds: dict[str, list[float]] = {name: [] for name in measures}
        for _ in range(rounds):
            for name, measure in measures.items():
                seconds[name].append(measure())
    finally:
        server.kill()
    print(f"{rounds} rounds, interleaved; whole processes unless noted")
    for name, runs in seconds.items():
        median = statistics.median(runs)
        goal = GOALS.get(name)
        versus = f"  median/goal {median / goal:.2f} (goal {goal:g} s)" if goal else ""
        print(f"{name:34} median {median:6.3f} s  max {max(runs):6.3f} s{versus}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 7))
