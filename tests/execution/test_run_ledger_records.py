"""The run ledger keeps each run's record as it was asked for and as it started, so a
restart continues it (issue 42 §1); lines an older server wrote still load."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from jupyter_loop.execution.durability.kept_runs import taken_up_job
from jupyter_loop.execution.durability.ledger import LedgerEntry, RunLedger
from jupyter_loop.execution.run_origin import TAB, RunOrigin, kept_source
from jupyter_loop.secrets import SecretMasker

LOG = logging.getLogger("test")


def test_a_run_is_listed_as_asked_then_as_started(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    ledger = RunLedger(path, LOG)
    masker = SecretMasker(["hunter2-hunter2"])
    asked = kept_source("pw = 'hunter2-hunter2'", masker)
    origin = RunOrigin("ada", TAB, run_all=True)
    ledger.add(
        [
            LedgerEntry(
                "room", "c1", "run1", "queued", "k1", source_hash=asked.hash,
                source=asked.text, queued_at=10.0, **origin.fields,
            )
        ]
    )  # fmt: skip
    handed = kept_source("pw = 'hunter2-hunter2'\nprint(pw)", masker)
    ledger.mark_sent("run1", "k1", "msg1", handed, 11.5)
    assert "hunter2" not in path.read_text()  # masked whole, as the history keeps it

    (entry,) = RunLedger(path, LOG).load()  # as a restarted server reads it
    job = taken_up_job(entry)
    assert job.origin == origin
    assert (entry.started_at, entry.msg_id) == (11.5, "msg1")
    assert job.kept == handed  # the source handed over, not the one asked for
    assert job.queued_at == 10.0


def test_an_older_servers_line_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    old = {"room_id": "room", "cell_id": "c1", "run_id": "run1", "state": "running",
           "kernel_id": "k1", "msg_id": "m1", "by": "ada", "approved_hash": "",
           "execution_count": None}  # fmt: skip
    path.write_text(json.dumps({"put": old}) + "\n")
    (entry,) = RunLedger(path, LOG).load()
    assert entry.origin is None and entry.kept is None and entry.started_at is None
    assert taken_up_job(entry).by == "ada"


def test_a_change_that_changes_nothing_writes_no_line(tmp_path: Path) -> None:
    """A run handed to the kernel as it is queued is listed running at once; marking it
    running again (as every handed run is) wrote a line of nothing but its id, on the way
    from the request to the kernel."""
    path = tmp_path / "runs.jsonl"
    ledger = RunLedger(path, LOG)
    ledger.add([LedgerEntry("room", "c1", "run1", "running", "k1")])
    ledger.mark_running("run1")
    ledger.flush()
    assert len(path.read_text().splitlines()) == 1
    (entry,) = RunLedger(path, LOG).load()
    assert entry.state == "running"
