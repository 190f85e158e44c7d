"""One chaos trial: a seeded sequence of events on a fresh notebook, then the checks.

Trials share one server process (a start costs seconds, and restarts are events of their
own), each on a notebook of its own, ``trial-K.ipynb``; trial K's events come from
``Random(f"{seed}:{K}")`` alone, so ``--trial K --seed S`` replays it on a fresh server.
"""

from __future__ import annotations

import asyncio
import os
import random
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from jupyter_ydoc import YNotebook

from .chaos_checks import Violation, check_file, check_room, check_store, store_rows
from .chaos_events import _run, plan
from .chaos_world import ChaosTab, World
from .server_process import ServerProcess
from .yjs import read_with_yjs

CLEANUP_DELAY = 1.0
EVENT_TIMEOUT = 120.0
FILE_CATCH_UP = 10.0
"""How long the ``.ipynb`` may trail the room once runs are over. The file follows the
room by a save: a second after runs stop ending, or the save interval; on a loaded machine
later (seed 2029 trials 74 and 91, most likely, read it in that moment). A file behind after
this long lost a save, and that is a violation."""


@dataclass(frozen=True)
class TrialResult:
    seed: int
    trial: int
    events: list[str]
    violations: list[Violation] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def new(self) -> list[Violation]:
        return [v for v in self.violations if v.known is None]


def chaos_server(home: Path) -> ServerProcess:
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")  # a hung server's stacks, on SIGABRT
    # CHAOS_SERVER_ARGS: more server options for a replay (``--log-level=DEBUG``, say).
    options = shlex.split(os.environ.get("CHAOS_SERVER_ARGS", ""))
    return ServerProcess(
        home,
        f"--YDocExtension.document_cleanup_delay={CLEANUP_DELAY}",
        "--JupyterLoopApp.approval_policy=always",  # agents' runs: see ``chaos_agents``
        *options,
    )


STEPS = (3, 6)
"""Events per trial, fewest and most."""


async def run_trial(
    server: ServerProcess, seed: int, trial: int, steps: tuple[int, int] = STEPS
) -> TrialResult:
    start = time.monotonic()
    rng = random.Random(f"{seed}:{trial}")
    if server.process is None or server.process.poll() is not None:
        server.kill()
        server.start()
        await server.ready()
    world = World(server, f"trial-{trial}.ipynb", cells=rng.randint(2, 3))
    world.cleanup_delay = CLEANUP_DELAY
    world.write_initial()
    events: list[str] = []
    violations: list[Violation] = []
    try:
        for event in plan(rng, rng.randint(*steps)):
            began = time.monotonic()
            said = await asyncio.wait_for(event(world, rng), EVENT_TIMEOUT)
            events.append(f"{said} ({time.monotonic() - began:.1f} s)")
        began = time.monotonic()
        await world.settle()
        events.append(f"settled ({time.monotonic() - began:.1f} s)")
        violations += await check(world, "after events", exact=False)
        await asyncio.wait_for(final_run(world), EVENT_TIMEOUT)
        await world.settle()
        violations += await check(world, "after a final run", exact=True)
    except Exception as e:  # a hang or a refusal is a finding, not a crash of the suite
        violations.append(Violation("trial", "events", f"{type(e).__name__}: {e}"))
    finally:
        await world.close_all_tabs()
        try:
            await world.end_sessions()
        except Exception:
            pass  # a server that died: the next trial starts another
    return TrialResult(seed, trial, events, violations, time.monotonic() - start)


async def final_run(world: World) -> None:
    """Run every cell once more, with no tab open: its outputs must be exact."""
    await world.close_all_tabs()
    await _run(world, "post", [cell.cell_id for cell in world.expected.cells])


async def file_caught_up(
    world: World, notebook: YNotebook, phase: str, *, exact: bool
) -> list[Violation]:
    """The file's violations once it has caught up with the room (or after
    :data:`FILE_CATCH_UP`)."""
    deadline = time.monotonic() + FILE_CATCH_UP
    while True:
        found = check_file(world.expected, world.file_json(), notebook, phase, exact=exact)
        if not found or time.monotonic() >= deadline:
            return found
        await asyncio.sleep(0.2)


async def check(world: World, phase: str, *, exact: bool) -> list[Violation]:
    found = [Violation(phase, "requests", error) for error in world.errors]
    world.errors = []
    pending = await world.server.api("api", "jupyter-loop", f"runs?path={quote(world.path)}")
    if pending.get("cells"):
        found.append(Violation(phase, "runs", f"left queued or running: {pending['cells']}"))
    checker = ChaosTab("checker", world)
    await checker.connect()
    try:
        await asyncio.sleep(0.5)  # the room's Y-only state (run markers) arrives after its cells
        notebook = checker.notebook
        rows = store_rows(world.server.ystore, checker.room_id)
        # One node process reads both: the state a joining tab gets, and the store's rows.
        yjs = read_with_yjs({"room": [notebook.ydoc.get_update()], "store": rows})
        found += check_room(world.expected, notebook, yjs["room"], phase, exact=exact)
        found += await file_caught_up(world, notebook, phase, exact=exact)
        found += check_store(world.expected, rows, yjs["store"], notebook, phase)
    finally:
        await checker.disconnect()
    return found
