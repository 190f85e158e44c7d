"""The output writer against a JupyterLab-like reader of the shared document.

JupyterLab 4 applies remote output changes in a particular way (see the writer's
docstring). ``JupyterLabMirror`` re-implements that reading; a random stream of kernel
output must leave the mirror equal to the document, and both equal to what a simple
reference model says the cell should show.
"""

from __future__ import annotations

import asyncio
import logging
import random
import tracemalloc
from typing import Any

import pytest
from jupyter_ydoc import YNotebook
from loop_helpers import wait_for

from jupyter_loop.execution.full_outputs.store import RunKey
from jupyter_loop.execution.outputs.budget import METADATA_KEY, OutputBudget, text_size, value_size
from jupyter_loop.execution.outputs.ops import (
    AppendOutput,
    AppendStream,
    ClearOutputs,
    OutputOp,
    UpdateDisplay,
)
from jupyter_loop.execution.outputs.writer import CellWriter, OutputPolicy
from jupyter_loop.secrets import SecretMasker
from jupyter_loop.testing.one_notebook import OneNotebook


class JupyterLabMirror:
    """Outputs of cell 0 as JupyterLab 4.6 rebuilds them from document events."""

    def __init__(self, notebook: YNotebook) -> None:
        self.outputs: list[dict[str, Any]] = []
        self._last_stream = ""
        self.transactions = 0
        notebook.ycells.observe_deep(self._on_events)

    def _on_events(self, events: list[Any]) -> None:
        self.transactions += 1
        text_events = [e for e in events if len(e.path) == 4 and e.path[1:2] == ["outputs"]]
        if text_events:  # JupyterLab reads only the first stream change
            self._apply_text(text_events[0].delta)
        for event in events:
            if event.path == [0, "outputs"]:
                self._apply_outputs(event.delta)
                break

    def _apply_text(self, delta: list[dict[str, Any]]) -> None:
        last = self.outputs[-1]
        for change in delta:
            if "delete" in change:  # pycrdt counts UTF-8 bytes (Yjs in a browser: UTF-16)
                encoded = last["text"].encode()
                last["text"] = encoded[: len(encoded) - change["delete"]].decode()
            if "insert" in change:
                last["text"] += str(change["insert"])

    def _apply_outputs(self, delta: list[dict[str, Any]]) -> None:
        retain = 0
        for change in delta:
            retain += change.get("retain", 0)
            for _ in range(change.get("delete", 0)):
                self.outputs.pop(retain)
            for output in change.get("insert", []):
                self._add(output.to_py())

    def _add(self, output: dict[str, Any]) -> None:
        if (
            output.get("output_type") == "stream"
            and output["name"] == self._last_stream
            and self.outputs
        ):
            self.outputs[-1]["text"] += output["text"]
            return
        self.outputs.append(output)
        self._last_stream = output["name"] if output.get("output_type") == "stream" else ""


def terminal(raw: str) -> str:
    """Reference rendering of ``\\r``, ``\\b`` and ``\\n``, one character at a time."""
    lines: list[str] = []
    line, cursor = "", 0
    for char in raw:
        if char == "\n":
            lines.append(line + "\n")
            line, cursor = "", 0
        elif char == "\r":
            cursor = 0
        elif char == "\b":
            cursor = max(cursor - 1, 0)
        else:
            line = line[:cursor] + char + line[cursor + 1 :]
            cursor += 1
    return "".join(lines) + line


class ReferenceCell:
    """What the cell must show after a sequence of edits (everything, nothing cut).

    With a ``masker``, secrets are masked in each stretch of a stream that no other
    output interrupts (display updates do not interrupt it), as the writer promises.
    """

    def __init__(self, masker: SecretMasker | None = None) -> None:
        self.masker = masker
        self.outputs: list[dict[str, Any]] = []
        self.masked: list[str] = []  # per output: stream text masked so far
        self.run = ""  # raw text of the last stream's stretch still open
        self.ids: list[str | None] = []
        self.pending_clear = False

    def apply(self, op: OutputOp) -> None:
        last = self.outputs[-1] if self.outputs else None
        continues = (
            isinstance(op, AppendStream)
            and last is not None
            and last.get("output_type") == "stream"
            and last["name"] == op.name
            and not self.pending_clear
        )
        if not continues and not isinstance(op, UpdateDisplay):
            self.close_stretch()
        if isinstance(op, ClearOutputs):
            if op.wait:
                self.pending_clear = True
            else:
                self._clear()
            return
        if isinstance(op, UpdateDisplay):
            for index, shown in enumerate(self.ids):
                if shown == op.display_id:
                    self.outputs[index] = {**self.outputs[index], "data": self._mask(op.data)}
            return
        if self.pending_clear:
            self._clear()
        if isinstance(op, AppendStream):
            if continues:
                self.run += op.text
            else:
                self.masked.append("")
                self.ids.append(None)
                self.outputs.append({"output_type": "stream", "name": op.name, "text": ""})
                self.run = op.text
            self._render()
            return
        self.masked.append("")
        self.ids.append(op.display_id)
        self.outputs.append(self._mask(dict(op.output)))

    def close_stretch(self) -> None:
        if self.outputs and self.outputs[-1].get("output_type") == "stream":
            self.masked[-1] += self._mask(self.run)
            self.run = ""
            self._render()

    def _render(self) -> None:
        pending = self.run if self.masker is None else self.masker.mask(self.run)
        self.outputs[-1]["text"] = terminal(self.masked[-1] + pending)

    def _mask(self, value: Any) -> Any:
        return value if self.masker is None else self.masker.mask_value(value)

    def _clear(self) -> None:
        self.outputs, self.masked, self.ids = [], [], []
        self.run = ""
        self.pending_clear = False


SECRET = "S3cr3t-K3y!"


def random_ops(generator: random.Random, step: int, *, long: bool = False) -> list[OutputOp]:
    """One random kernel output, or a secret split over several stream messages."""
    roll = generator.random()
    name = generator.choice(["stdout", "stdout", "stderr"])
    if roll < 0.05:
        cuts = sorted(generator.sample(range(1, len(SECRET)), 2))
        pieces = [SECRET[: cuts[0]], SECRET[cuts[0] : cuts[1]], SECRET[cuts[1] :]]
        return [AppendStream(name, piece) for piece in pieces]
    if roll < 0.6:
        alphabet = "ab\n\r\bé😀" if not long else "abcdefgh\n\n\r\bé😀"
        size = generator.randint(1, 6) if not long else generator.randint(1, 80)
        return [AppendStream(name, "".join(generator.choice(alphabet) for _ in range(size)))]
    if roll < 0.75:
        display = generator.choice(["d1", "d2", None])
        text = f"v{step}" if not long else f"v{step} " + "x" * generator.randint(0, 2500)
        if generator.random() < 0.1:
            text += f" {SECRET}"
        output = {"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}
        return [AppendOutput(output, display)]
    if roll < 0.85:
        text = f"u{step}" if not long else f"u{step} " + "y" * generator.randint(0, 2500)
        return [UpdateDisplay(generator.choice(["d1", "d2"]), {"text/plain": text}, {})]
    return [ClearOutputs(wait=generator.random() < 0.5)]


def random_op(generator: random.Random, step: int) -> OutputOp:
    return random_ops(generator, step)[-1]


def new_notebook() -> YNotebook:
    notebook = YNotebook()
    notebook.append_cell({"cell_type": "code", "id": "c", "source": "", "outputs": []})
    return notebook


def writer_for(notebook: YNotebook, policy: OutputPolicy | None = None) -> CellWriter:
    writer = CellWriter(
        OneNotebook(notebook),  # type: ignore[arg-type]
        "json:notebook:file",
        "c",
        interval=10.0,  # flushed by hand
        log=logging.getLogger("test"),
        policy=policy,
    )
    writer.reset("run")
    return writer


def shown(notebook: YNotebook) -> list[dict[str, Any]]:
    outputs = notebook.ycells[0]["outputs"].to_py()
    return [{k: v for k, v in output.items() if k != "metadata"} for output in outputs]


def strip(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in output.items() if k != "metadata"} for output in outputs]


async def boundary(writer: CellWriter) -> None:
    """Flush as at the end of a run (held-back text released, the tail caught up)."""
    await writer.flush(then=lambda notebook, ycell: None)


async def test_random_output_reads_the_same_in_jupyterlab_and_on_disk():
    for seed in range(40):
        generator = random.Random(seed)
        notebook = new_notebook()
        mirror = JupyterLabMirror(notebook)
        writer = writer_for(notebook)
        reference = ReferenceCell()
        for step in range(60):
            op = random_op(generator, step)
            writer.push(op)
            reference.apply(op)
            if generator.random() < 0.3:
                await writer.flush()
                assert strip(mirror.outputs) == shown(notebook), f"seed {seed} step {step}"
                assert shown(notebook) == strip(reference.outputs), f"seed {seed} step {step}"
        await writer.flush()
        assert strip(mirror.outputs) == shown(notebook) == strip(reference.outputs)


async def test_random_output_with_secrets_is_masked_like_the_reference():
    masker = SecretMasker([SECRET], token_patterns=False)
    for seed in range(40):
        generator = random.Random(seed)
        notebook = new_notebook()
        mirror = JupyterLabMirror(notebook)
        writer = writer_for(notebook, OutputPolicy(masker=masker))
        reference = ReferenceCell(masker)
        for step in range(80):
            for op in random_ops(generator, step):
                writer.push(op)
                reference.apply(op)
            if generator.random() < 0.3:
                await writer.flush()
                assert strip(mirror.outputs) == shown(notebook), f"seed {seed} step {step}"
        await boundary(writer)
        reference.close_stretch()
        assert strip(mirror.outputs) == shown(notebook), f"seed {seed}"
        assert shown(notebook) == strip(reference.outputs), f"seed {seed}"


async def test_a_batch_of_prints_is_one_transaction():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    writer = writer_for(notebook)
    for i in range(500):
        writer.push(AppendStream("stdout", f"{i}\n"))
    await writer.flush()
    assert mirror.transactions == 1
    assert notebook.ycells[0]["outputs"][0]["text"].to_py() == "".join(f"{i}\n" for i in range(500))


async def test_a_line_after_a_quiet_spell_shows_at_once_and_a_burst_waits_for_its_batch():
    """A cell that prints now and then shows each line as it comes (as stock JupyterLab
    does), not ``interval`` later; lines within ``interval`` of a write are batched."""
    notebook = new_notebook()
    writer = writer_for(notebook)  # an interval of 10 s
    writer.push(AppendStream("stdout", "first\n"))
    # Within a few seconds, not the interval's 10: a busy machine can take a second or two.
    await wait_for(lambda: shown(notebook), timeout=5)
    assert shown(notebook)[0]["text"] == "first\n"
    writer.push(AppendStream("stdout", "second\n"))
    writer.push(AppendStream("stdout", "third\n"))
    await asyncio.sleep(0.2)
    assert shown(notebook)[0]["text"] == "first\n"  # written 0.2 s ago: waits its batch
    await writer.flush()
    assert shown(notebook)[0]["text"] == "first\nsecond\nthird\n"


async def test_progress_line_rewrite_deletes_then_appends():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    writer = writer_for(notebook)
    writer.push(AppendStream("stdout", "done\n50%"))
    await writer.flush()
    writer.push(AppendStream("stdout", "\r75%"))
    await writer.flush()
    assert mirror.transactions == 3  # insert; then delete "50%"; then append "75%"
    assert mirror.outputs[0]["text"] == "done\n75%"


async def test_clear_output_wait_replaces_in_one_transaction():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    writer = writer_for(notebook)
    writer.push(AppendStream("stdout", "frame 1\n"))
    await writer.flush()
    before = mirror.transactions
    writer.push(ClearOutputs(wait=True))
    writer.push(AppendStream("stdout", "frame 2\n"))
    await writer.flush()
    assert mirror.transactions == before + 1  # never an empty cell in between
    assert mirror.outputs == [{"output_type": "stream", "name": "stdout", "text": "frame 2\n"}]


async def test_writes_stay_out_of_the_undo_stack():
    notebook = new_notebook()
    notebook.undo_manager.clear()
    writer = writer_for(notebook)
    writer.push(AppendStream("stdout", "x"))
    await writer.flush()
    assert not notebook.undo_manager.can_undo()
    # An origin-less edit of the same cell is tracked: the check above can fail.
    notebook.ycells[0]["source"] += "y"
    assert notebook.undo_manager.can_undo()


async def test_outputs_cleared_elsewhere_mid_run_stay_cleared():
    notebook = new_notebook()
    writer = writer_for(notebook)
    writer.push(AppendStream("stdout", "before\n"))
    await writer.flush()
    outputs = notebook.ycells[0]["outputs"]
    with notebook.ydoc.transaction():  # a tab clears the cell's outputs
        del outputs[0 : len(outputs)]
    writer.push(AppendStream("stdout", "after\n"))
    await writer.flush()
    assert shown(notebook) == [{"output_type": "stream", "name": "stdout", "text": "after\n"}]


async def test_the_writer_holds_no_second_copy_of_what_the_document_holds():
    notebook = new_notebook()
    writer = writer_for(notebook)  # no budget: the document holds all of it
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for batch in range(200):  # 10 KB a batch, 2 MB in all
            writer.push(
                AppendStream("stdout", "".join(f"{batch:03d}{i:096d}\n" for i in range(100)))
            )
            await writer.flush()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(notebook.ycells[0]["outputs"][0]["text"]) == 200 * 100 * 100
    assert held < 100_000  # Python memory: a copy of the text would be 2 MB


class MemoryRecorder:
    """A run record in memory: every output in full, as the output store keeps it."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []

    def new_stream(self, name: str, text: str) -> int:
        self.parts.append({"output_type": "stream", "name": name, "text": text})
        return len(self.parts) - 1

    def edit_stream(self, removed: str, insert: str) -> None:
        text = self.parts[-1]["text"]
        assert text.endswith(removed)
        self.parts[-1]["text"] = text[: len(text) - len(removed)] + insert

    def add_output(self, output: dict[str, Any]) -> int:
        self.parts.append(dict(output))
        return len(self.parts) - 1

    def replace_output(self, part: int, output: dict[str, Any]) -> None:
        self.parts[part] = dict(output)

    def sync(self) -> None:
        return None


class MemoryStore:
    """The output store's writing side, in memory."""

    def __init__(self) -> None:
        self.records: dict[str, MemoryRecorder] = {}

    def begin_run(self, key: RunKey) -> None:
        self.records.clear()

    def recorder(self, key: RunKey, *, fitted: bool = False) -> MemoryRecorder:
        self.records[key.run_id] = MemoryRecorder()
        return self.records[key.run_id]

    def discard(self, key: RunKey) -> None:
        self.records.pop(key.run_id, None)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


SMALL = OutputBudget(head=1500, tail_max=1500, tail_keep=700)
BRIEF_PLACEHOLDER = 512


def is_marker(output: dict[str, Any]) -> bool:
    return "lines" in output.get("metadata", {}).get(METADATA_KEY, {}).get("omitted", {})


def is_placeholder(output: dict[str, Any]) -> bool:
    if output.get("output_type") == "error":
        return False
    return "mime_types" in output.get("metadata", {}).get(METADATA_KEY, {}).get("omitted", {})


def same_output(kept: dict[str, Any], full: dict[str, Any], *, head: bool, tail: bool) -> bool:
    """``kept`` shows ``full``: equal, a placeholder of it, or (streams) a part of its text."""
    if is_placeholder(kept):
        return kept["output_type"] == full["output_type"]
    if kept.get("output_type") == "stream" and full.get("output_type") == "stream":
        if kept["name"] != full["name"]:
            return False
        if kept["text"] == full["text"]:
            return True
        return (head and full["text"].startswith(kept["text"])) or (
            tail and full["text"].endswith(kept["text"])
        )
    return strip([kept]) == strip([full])


def size(output: dict[str, Any]) -> int:
    """An output's size as the budget counts it (a stream by its text)."""
    if output.get("output_type") == "stream":
        return text_size(output["text"])
    return value_size(output)


def check_budgeted(document: list[dict[str, Any]], reference: list[dict[str, Any]]) -> None:
    """The document keeps a head and a tail of the reference, with a marker between."""
    markers = [index for index, output in enumerate(document) if is_marker(output)]
    assert len(markers) <= 1
    if not markers:
        assert len(document) == len(reference)
        for kept, full in zip(document, reference, strict=True):
            assert same_output(kept, full, head=False, tail=False), (kept, full)
        return
    head, tail = document[: markers[0]], document[markers[0] + 1 :]
    # A display in the (frozen) head updated to something too big becomes a placeholder,
    # which may overshoot the head by its own size (from_total reserves room for that).
    assert sum(size(output) for output in head) <= SMALL.head + BRIEF_PLACEHOLDER
    assert sum(size(output) for output in tail) <= SMALL.tail_max
    for index, kept in enumerate(head):
        last = index == len(head) - 1
        assert same_output(kept, reference[index], head=last, tail=False), (kept, index)
        if last and kept.get("output_type") == "stream":
            assert kept["text"].endswith("\n") or kept["text"] == reference[index]["text"]
    for offset, kept in enumerate(tail):
        full = reference[len(reference) - len(tail) + offset]
        assert same_output(kept, full, head=False, tail=offset == 0), (kept, full)


@pytest.mark.parametrize("kept", [True, False], ids=["full output kept", "no store"])
async def test_random_output_within_a_budget_keeps_head_tail_and_the_full_record(kept: bool):
    masker = SecretMasker([SECRET], token_patterns=False)
    omitted = placeholders = 0
    for seed in range(60):
        generator = random.Random(seed)
        notebook = new_notebook()
        mirror = JupyterLabMirror(notebook)
        store, clock = MemoryStore(), FakeClock()
        policy = OutputPolicy(
            budget=SMALL, masker=masker, store=store if kept else None, clock=clock
        )
        writer = writer_for(notebook, policy)
        reference = ReferenceCell(masker)
        for step in range(150):
            for op in random_ops(generator, step, long=True):
                writer.push(op)
                reference.apply(op)
            if generator.random() < 0.3:
                clock.now += generator.choice([0.1, 0.5, 2.0])
                await writer.flush()
                assert strip(mirror.outputs) == shown(notebook), f"seed {seed} step {step}"
        await boundary(writer)
        reference.close_stretch()
        document = notebook.ycells[0]["outputs"].to_py()
        assert strip(mirror.outputs) == strip(document), f"seed {seed}"
        check_budgeted(document, reference.outputs)
        record = store.records.get("run")
        if record is not None:  # something was left out: the record holds everything
            assert strip(record.parts) == strip(reference.outputs), f"seed {seed}"
        omitted += any(is_marker(output) for output in document)
        placeholders += any(is_placeholder(output) for output in document)
    assert omitted > 10 and placeholders > 10  # the cases above were exercised


async def test_a_long_stream_keeps_its_head_and_tail_around_a_marker():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    store, clock = MemoryStore(), FakeClock()
    writer = writer_for(notebook, OutputPolicy(budget=SMALL, store=store, clock=clock))
    lines = [f"{i}\n" for i in range(2000)]
    for start in range(0, 2000, 100):
        writer.push(AppendStream("stdout", "".join(lines[start : start + 100])))
        await writer.flush()
        clock.now += 0.3
    await boundary(writer)
    head, marker, tail = notebook.ycells[0]["outputs"].to_py()
    assert "".join(lines).startswith(head["text"]) and head["text"].endswith("\n")
    assert "".join(lines).endswith(tail["text"]) and tail["text"].startswith(tail["text"][0])
    assert tail["text"].endswith("1999\n")
    omitted = marker["metadata"][METADATA_KEY]["omitted"]
    assert omitted["lines"] == 2000 - head["text"].count("\n") - tail["text"].count("\n")
    assert f"{int(omitted['lines']):,} lines" in marker["data"]["text/plain"]
    assert (
        '<a href="/api/jupyter-loop/outputs/file/c/run" target="_blank">'
        in (marker["data"]["text/html"])
    )
    assert strip(mirror.outputs) == strip([head, marker, tail])
    assert store.records["run"].parts == [
        {"output_type": "stream", "name": "stdout", "text": "".join(lines)}
    ]


async def test_the_tail_moves_on_at_most_once_per_catch_up_interval():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    clock = FakeClock()
    writer = writer_for(notebook, OutputPolicy(budget=SMALL, store=MemoryStore(), clock=clock))
    writer.push(AppendStream("stdout", "x\n" * 2000))  # head, marker and a trimmed tail
    await writer.flush()
    rewrites = mirror.transactions
    for _ in range(10):  # the tail overflows again and again, within the same second
        writer.push(AppendStream("stdout", "y\n" * 500))
        await writer.flush()
    assert mirror.transactions == rewrites  # the document waits
    clock.now += 1.0
    await writer.flush()
    assert mirror.transactions == rewrites + 1  # one rewrite: delete and append the tail
    assert mirror.outputs[-1]["text"].endswith("y\n" * 40)
    writer.push(AppendStream("stdout", "z\n" * 500))
    await boundary(writer)  # the end of a run catches up at once
    assert mirror.outputs[-1]["text"].endswith("z\n" * 40)
    assert strip(mirror.outputs) == shown(notebook)


async def test_a_huge_rich_output_becomes_a_placeholder_linking_to_it():
    notebook = new_notebook()
    store = MemoryStore()
    writer = writer_for(notebook, OutputPolicy(budget=SMALL, store=store))
    image = {
        "output_type": "display_data",
        "data": {"image/png": "iVBOR" * 1000, "text/plain": "<Figure size 640x480>"},
        "metadata": {"image/png": {"width": 640}},
    }
    writer.push(AppendStream("stdout", "before\n"))
    writer.push(AppendOutput(image))
    writer.push(AppendStream("stdout", "after\n"))
    await boundary(writer)
    before, placeholder, after = notebook.ycells[0]["outputs"].to_py()
    assert (before["text"], after["text"]) == ("before\n", "after\n")
    assert placeholder["output_type"] == "display_data"
    assert "image/png" not in placeholder["data"]
    assert placeholder["data"]["text/plain"].startswith("<Figure size 640x480>\n[image/png")
    assert (
        '<a href="/api/jupyter-loop/outputs/file/c/run/1" target="_blank">'
        in (placeholder["data"]["text/html"])
    )
    assert store.records["run"].parts[1] == image


async def test_a_finished_run_lets_go_of_its_outputs_and_takes_them_back_for_an_update():
    notebook = new_notebook()
    mirror = JupyterLabMirror(notebook)
    writer = writer_for(notebook)
    writer.push(AppendOutput({"output_type": "display_data", "data": {"text/plain": "a"}}, "d"))
    writer.push(AppendStream("stdout", "after\n"))
    await writer.end_run()
    assert writer.has_display("d")
    writer.push(UpdateDisplay("d", {"text/plain": "b"}, {}))
    await writer.flush()
    assert strip(mirror.outputs) == shown(notebook)
    assert shown(notebook) == [
        {"output_type": "display_data", "data": {"text/plain": "b"}},
        {"output_type": "stream", "name": "stdout", "text": "after\n"},
    ]


class FailingStore(MemoryStore):
    def recorder(self, key: RunKey, *, fitted: bool = False) -> MemoryRecorder:
        raise OSError(28, "No space left on device")


async def test_a_failing_disk_costs_the_full_output_not_the_notebook(caplog):
    notebook = new_notebook()
    writer = writer_for(notebook, OutputPolicy(budget=SMALL, store=FailingStore()))
    writer.push(AppendStream("stdout", "".join(f"{i}\n" for i in range(500))))
    await boundary(writer)
    head, marker, tail = notebook.ycells[0]["outputs"].to_py()
    assert head["text"].startswith("0\n") and tail["text"].endswith("499\n")
    assert "cannot keep the full output" in caplog.text
