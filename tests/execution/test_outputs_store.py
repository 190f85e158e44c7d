"""The store of full outputs: run records on disk, retention and reading back."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from jupyter_loop.errors import NotFound
from jupyter_loop.execution.full_outputs.store import FileOutputStore, RunKey

KEY = RunKey("file-1", "cell-1", "run-1")
IMAGE = {
    "output_type": "display_data",
    "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
    "metadata": {},
}


def text_of(store: FileOutputStore, key: RunKey = KEY) -> str:
    return b"".join(store.full_text(key, lambda part: f"/link/{part}")).decode()


def test_streams_and_outputs_read_back_in_order(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "a\n")
    recorder.edit_stream("", "b\n")
    recorder.add_output(IMAGE)
    recorder.new_stream("stderr", "oops\n")
    recorder.sync()
    parts = store.parts(KEY)
    assert [(p.part, p.type, p.name) for p in parts] == [
        (0, "stream", "stdout"),
        (1, "output", ""),
        (2, "stream", "stderr"),
    ]
    assert parts[1].mime_types == ("image/png", "text/plain")
    assert store.load_output(KEY, parts[1]) == IMAGE
    reference = "[display_data 1: image/png, text/plain (104 bytes): /link/1]"
    assert text_of(store) == f"a\nb\n\n{reference}\noops\n"


def test_a_progress_line_is_rewritten_in_place(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "done\n50%")
    recorder.sync()  # the line is on disk now: the edit truncates the file
    recorder.edit_stream("50%", "100%\n")
    recorder.sync()
    assert text_of(store) == "done\n100%\n"


def test_an_edit_of_buffered_text_needs_no_disk(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "10%")
    recorder.edit_stream("10%", "20%")
    recorder.edit_stream("20%", "😀\n")
    recorder.sync()
    assert text_of(store) == "😀\n"


def test_a_display_update_replaces_the_output(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    part = recorder.add_output(IMAGE)
    recorder.replace_output(part, {**IMAGE, "data": {"text/plain": "new"}})
    recorder.sync()
    (only,) = store.parts(KEY)
    assert store.load_output(KEY, only)["data"] == {"text/plain": "new"}


def test_text_not_yet_synced_is_not_visible_but_the_open_stream_is_after_sync(
    tmp_path: Path,
) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "first\n")
    recorder.sync()
    recorder.edit_stream("", "second\n")
    assert text_of(store) == "first\n"
    recorder.sync()
    assert text_of(store) == "first\nsecond\n"


def test_a_run_keeps_at_most_its_limit_and_says_so(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path, max_run_bytes=10)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "0123456\n")
    recorder.edit_stream("", "789abc\n")  # over the limit: dropped
    recorder.add_output(IMAGE)  # dropped too, but numbered
    recorder.sync()
    parts = store.parts(KEY)
    assert parts[1].dropped
    text = text_of(store)
    assert text.startswith("0123456\n\n[display_data 1: image/png, text/plain: not kept]")
    assert "keeps at most 10 bytes of a run's output" in text


def test_starting_a_run_removes_the_cells_earlier_runs(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    store.recorder(KEY).sync()
    other_cell = RunKey("file-1", "cell-2", "run-0")
    store.recorder(other_cell).sync()
    store.begin_run(RunKey("file-1", "cell-1", "run-2"))
    with pytest.raises(NotFound, match="no longer kept"):
        store.parts(KEY)
    assert store.parts(other_cell) == []


def test_a_cell_keeps_its_newest_runs(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path, runs_per_cell=2)
    runs = [RunKey("file-1", "cell-1", f"run-{n}") for n in range(3)]
    for age, key in zip((30, 20, 10), runs, strict=True):
        store.begin_run(key)
        store.recorder(key).sync()
        written = time.time() - age  # a second apart at least: mtimes order them
        os.utime(tmp_path / "file-1" / "cell-1" / key.run_id / "index.jsonl", (written,) * 2)
    store.begin_run(RunKey("file-1", "cell-1", "run-3"))
    with pytest.raises(NotFound, match="the last 2 runs of a cell"):
        store.parts(runs[0])
    with pytest.raises(NotFound):
        store.parts(runs[1])
    assert store.parts(runs[2]) == []


def test_the_store_keeps_within_its_bytes_oldest_first(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path, max_bytes=3000, runs_per_cell=5)
    keys = [RunKey("file-1", f"cell-{n}", "run-1") for n in range(3)]
    for age, key in zip((30, 20, 10), keys, strict=True):
        recorder = store.recorder(key)
        recorder.new_stream("stdout", "x" * 1000)
        recorder.sync()
        written = time.time() - age
        os.utime(tmp_path / "file-1" / key.cell_id / "run-1" / "index.jsonl", (written,) * 2)
    # Over 3000 bytes with the index files: a new record makes room, the oldest first.
    store.recorder(RunKey("file-2", "cell-1", "run-1")).sync()
    with pytest.raises(NotFound):
        store.parts(keys[0])
    assert len(store.parts(keys[1])) == len(store.parts(keys[2])) == 1


def test_fitted_records_walk_the_store_for_its_bytes_at_most_every_minute(
    tmp_path: Path,
) -> None:
    """Every run's end records its outputs: a stat of every record each time would cost
    a trivial cell more than the run. A cut run's record still walks each time."""
    store = FileOutputStore(tmp_path, max_bytes=1500, runs_per_cell=5)
    keys = [RunKey("file-1", f"cell-{n}", "run-1") for n in range(4)]
    for key in keys[:3]:
        recorder = store.recorder(key, fitted=True)
        recorder.new_stream("stdout", "x" * 1000)
        recorder.sync()
    # The first fitted record walked (nothing to remove); the next two did not.
    assert all(store.parts(key) for key in keys[:3])
    store.recorder(keys[3]).sync()  # a cut run's record: the oldest go now
    kept = []
    for key in keys[:3]:
        try:
            kept.append(bool(store.parts(key)))
        except NotFound:
            kept.append(False)
    assert kept.count(True) == 1


def test_sweep_removes_old_records_only(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path, max_age_days=1)
    store.recorder(KEY).sync()
    fresh = RunKey("file-2", "cell-1", "run-1")
    store.recorder(fresh).sync()
    old = time.time() - 2 * 86400
    os.utime(tmp_path / "file-1" / "cell-1" / "run-1" / "index.jsonl", (old, old))
    assert store.sweep() == 1
    assert not (tmp_path / "file-1").exists()
    assert store.parts(fresh) == []


def test_discard_removes_the_record(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    store.recorder(KEY).sync()
    store.discard(KEY)
    with pytest.raises(NotFound):
        store.parts(KEY)


@pytest.mark.parametrize("bad", ["..", ".hidden", "a/b", "", "x" * 200])
def test_unsafe_keys_are_refused(bad: str) -> None:
    with pytest.raises(NotFound):
        RunKey(bad, "cell", "run")


def test_the_index_is_json_lines(tmp_path: Path) -> None:
    store = FileOutputStore(tmp_path)
    recorder = store.recorder(KEY)
    recorder.new_stream("stdout", "x")
    recorder.sync()
    index = (tmp_path / "file-1" / "cell-1" / "run-1" / "index.jsonl").read_text()
    assert [json.loads(line)["part"] for line in index.splitlines()] == [0]
