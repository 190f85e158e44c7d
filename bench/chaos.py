"""Seeded chaos trials against a real server: is anything ever lost, duplicated or stuck?

Each trial writes a fresh notebook of 2-3 code cells (``trial-K.ipynb``) whose cells print
numbered lines tagged with their code (``c1-t0 0`` … ``c1-t0 11``), then plays 3-6
events drawn by ``Random(f"{seed}:{K}")`` (``jupyter_loop/testing/chaos_events.py``):

* tabs (pycrdt Y clients over the room's websocket) opened, closed, reopened; one tab,
  or two at once in the same cell, typing comment lines;
* the "laptop lid": a tab's connection dropped for longer than the room clean-up delay
  (1 s here) while it types on, then reconnected with its document;
* the server stopped by SIGTERM or SIGKILL (maybe mid-run) and started again on the
  same root, data directory and store;
* the collaboration store (SQLite) deleted, truncated or left with a hot journal while
  the server is stopped;
* the ``.ipynb`` replaced on disk while the server runs (a ``git checkout``), with and
  without a run in flight;
* runs from a tab's runs socket, from ``POST runs``, from ``jupyter loop run`` and from
  an outside agent over MCP (the SDK's client), with or without tabs open;
* an agent's proposal (over MCP) accepted through the REST API while a tab types in
  another cell.

Then the checks (``chaos_checks.py``), twice: after the events, and after a last run of
every cell with no tab open. The views checked: the ``.ipynb`` on disk, the room as a
joining tab receives it (read by pycrdt and by Yjs 13, the browser's library), the
store's rows (pycrdt and Yjs). Invariants: the cells are the notebook's, once each, in
order; each source is the last written code followed by every typed line, each tab's in
its order; each cell's stdout is what a run of one of its codes printed, whole (after the
last run: exactly its current code's lines, nothing else); file, room, Yjs and store
agree; nothing pending in Yjs; no ``[*]`` and no run marker queued or running.

Expected where there is a real conflict (and what is checked):

* Out-of-band write: the file wins. Sources become the file's (typed lines the file does
  not have are gone, by design: the user checked out another version); the outputs of a
  run in flight keep landing in the cell with the same id, and the run owns that cell's
  outputs: it shows one run's lines (whole, or a prefix), never the file's old outputs
  with the run's lines after them.
* Kill or stop mid-run: the cell shows a prefix of the run's lines, then the server's
  note on how the run ended (or the whole run, when the output journal replays it). A run
  the server already reported over (``GET runs`` no longer lists it) is not mid-run: it
  keeps every line, and no note, through any kill.
* Typing and kills: a kill comes once the typed lines reached the file (a tab cannot
  resume its document over a restart: jupyter-collaboration's session id changes and the
  tab reloads), so typed text the server acknowledged and saved is never lost.

Trials share one server (a start costs ~6 s on two cores; restarts are events of their
own). Replay a failing trial alone with ``--trial K --seed S``: its events are the same,
on a fresh server.

Usage: ``python bench/chaos.py N [--seed S] [--trial K] [--steps 3-6] [--keep DIR]``;
prints one line per trial, then ``trials=N violations=V`` and each violation with its
replay command. Known open defects are labelled ``[known …]`` and counted apart.
``CHAOS_SERVER_ARGS="--log-level=DEBUG"`` passes options to the server (its log is kept
with ``--keep``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This checkout's jupyter-loop, here and in every server and CLI run started: an editable
# install points at one working tree, and a long run from a snapshot must not pick up edits
# made there meanwhile (a half-moved package once failed two trials with 404s).
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from jupyter_loop.testing.chaos_trial import (  # noqa: E402
    TrialResult,
    chaos_server,
    run_trial,
)


async def run(
    trials: list[int], seed: int, home: Path, steps: tuple[int, int], results: list[TrialResult]
) -> None:
    """Append each trial's result to ``results`` as it ends (a run stopped with Ctrl-C
    still reports the trials it finished)."""
    server = chaos_server(home)
    try:
        for trial in trials:
            result = await run_trial(server, seed, trial, steps)
            results.append(result)
            state = "ok" if not result.violations else f"{len(result.violations)} violations"
            known = len(result.violations) - len(result.new)
            state += f" ({known} known)" if known else ""
            events = " | ".join(result.events)
            print(f"trial {trial}: {state} [{result.seconds:.1f} s] {events}", flush=True)
            for violation in result.violations:
                print(f"  VIOLATION {violation}", flush=True)
    finally:
        server.kill()


def report(results: list[TrialResult], seed: int) -> int:
    total = sum(len(r.violations) for r in results)
    new = sum(len(r.new) for r in results)
    print(f"\ntrials={len(results)} violations={total} (new={new}, known={total - new})")
    for result in results:
        if not result.violations:
            continue
        replay = f"python bench/chaos.py 1 --seed {seed} --trial {result.trial}"
        print(f"\ntrial {result.trial} (replay: {replay})")
        for event in result.events:
            print(f"  event: {event}")
        for violation in result.violations:
            print(f"  VIOLATION {violation}")
    return 1 if new else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trials", type=int, help="how many trials")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trial", type=int, help="replay this one trial alone")
    parser.add_argument(
        "--first",
        type=int,
        default=0,
        help="start at this trial (a run split across processes: each trial's plan depends "
        "on the seed and its number only)",
    )
    parser.add_argument("--steps", default="3-6", help="events per trial, e.g. 2-3 (CI's)")
    parser.add_argument("--keep", type=Path, help="keep the server's files (logs, store) here")
    args = parser.parse_args()
    trials = [args.trial] if args.trial is not None else list(range(args.first, args.trials))
    fewest, most = (int(n) for n in args.steps.split("-"))
    results: list[TrialResult] = []
    with tempfile.TemporaryDirectory(prefix="chaos-") as scratch:
        home = args.keep or Path(scratch)
        home.mkdir(parents=True, exist_ok=True)
        try:
            asyncio.run(run(trials, args.seed, home, (fewest, most), results))
        except KeyboardInterrupt:
            print("interrupted: the trials so far", flush=True)
    return report(results, args.seed)


if __name__ == "__main__":
    sys.exit(main())
