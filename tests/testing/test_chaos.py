"""A short seeded run of the chaos suite (``bench/chaos.py``): nothing lost, duplicated or stuck.

The same trials as ``python bench/chaos.py 30 --seed 17 --steps 2-3`` (2-3 events each to
keep CI's time), in three parts of ten with a server each: one 30-trial test of nearly three
minutes kept one pytest-xdist process busy while the other had nothing left to do. A
failure names the trial to replay alone with ``--trial K``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_loop.testing.chaos_trial import TrialResult, chaos_server, run_trial
from jupyter_loop.testing.server_process import ServerProcess

SEED = 17
TRIALS = 30
PARTS = 3
STEPS = (2, 3)

TOLERATED: set[str] = set()
"""Open defects, each in docs/engineering/not-there-yet.md: take one out of here with its fix,
so this test guards it from then on. Yjs pending structs, torn saves and (d), a tab back from
offline after a checkout, were here until they were fixed."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = chaos_server(tmp_path)
    yield process
    process.kill()


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("part", range(PARTS))
async def test_seeded_chaos_trials_lose_nothing(server: ServerProcess, part: int):
    results: list[TrialResult] = []
    for trial in range(part, TRIALS, PARTS):
        result = await run_trial(server, SEED, trial, STEPS)
        results.append(result)
        events = " | ".join(result.events)
        print(f"trial {trial}: {len(result.violations)} violations: {events}")
    failures = [
        f"trial {r.trial} (--trial {r.trial} --seed {SEED} --steps 2-3): {v}"
        for r in results
        for v in r.violations
        if v.known not in TOLERATED
    ]
    assert not failures, "\n".join(failures)
