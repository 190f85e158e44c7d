"""The one writer of a cell's outputs: masks, budgets and batches kernel output into the
live notebook.

Every edit is applied at once to a bounded model of the cell's outputs
(:class:`~.cell_outputs.CellOutputs`): secrets masked (:mod:`.masking`), stream text
rendered like a terminal, a long output cut to its head and tail with a marker, a huge
one replaced by a placeholder, and the full output handed to the output store
(:mod:`.run_record`). Memory therefore stays bounded however fast a kernel writes; and
once written, the model lets go of what the document holds (a rewrite reads it back), so
the writer keeps no second copy of the cell's outputs.

The document is brought up to date with that model at most every ``interval`` seconds,
and at once for the first edit after a quiet spell (a cell that prints now and then
shows each line when it comes), in the way JupyterLab 4 reads a shared code cell
(:mod:`.writes`), so every tab renders exactly what the document holds.

One transaction per message would cost several times the text in updates and bloat the
YStore; a long output's tail is rewritten at most once per ``catch_up_interval``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map

from ...document import LiveDocuments, NotebookRef, find_cell, writing
from ...errors import NotFound
from ...secrets import SecretMasker
from ...tasks import BackgroundTasks
from ..durability.wal import OutputJournal, RunEnd, RunJournal
from ..full_outputs.run_record import RunRecord
from ..full_outputs.store import OutputStore, RunKey
from .budget import OutputBudget
from .cell_outputs import CellOutputs
from .masking import OutputMasking
from .ops import AppendOutput, OutputOp
from .reloads import RunReloads
from .writes import apply_plan, tail_length

CellMutation = Callable[[YNotebook, Map], None]
CellReading = Callable[[Map], None]
"""Reads a cell right after a write of ours committed, before anything else can change it:
what needs the written outputs (the history's digest of them) but not in the write's
transaction, which the tabs' update waits for."""


@dataclass(frozen=True)
class OutputPolicy:
    """What happens to outputs on their way into the document.

    Attributes:
        budget: Byte limits per cell (``None``: keep everything).
        masker: Masks secrets (``None``: no masking).
        store: Keeps the full output when the document keeps part of it.
        link_prefix: URL path of the full-output endpoint, base URL included
            (``/api/jupyter-loop/outputs`` on a server at ``/``).
        catch_up_interval: Seconds between rewrites of a long output's tail.
        clock: Monotonic seconds (a seam for tests).
        journal: Journals every run's output edits ahead of the document (``None``: no
            journal; a crash loses what came since the last save).
    """

    budget: OutputBudget | None = None
    masker: SecretMasker | None = None
    store: OutputStore | None = None
    link_prefix: str = "/api/jupyter-loop/outputs"
    catch_up_interval: float = 1.0
    clock: Callable[[], float] = time.monotonic
    journal: OutputJournal | None = None


class CellWriter:
    """Output edits of one cell, applied to a bounded model and flushed in batches."""

    def __init__(
        self,
        docs: LiveDocuments,
        room_id: str,
        cell_id: str,
        *,
        interval: float,
        log: logging.Logger,
        policy: OutputPolicy | None = None,
        index_hint: int | None = None,
    ) -> None:
        self.room_id = room_id
        self.cell_id = cell_id
        self._docs = docs
        self._interval = interval
        self._log = log
        self._policy = policy or OutputPolicy()
        self._timer: asyncio.TimerHandle | None = None
        self._flush_coming = False  # a flush's task is made and has not begun
        self._flushes = BackgroundTasks(log)
        self._lock = asyncio.Lock()
        self._index_hint = index_hint  # where the cell was last seen (see ``find_cell``)
        self._last_rewrite = float("-inf")
        self._last_flush = float("-inf")  # when outputs were last written
        self._run_began: float | None = None  # monotonic: when the last run began
        self._open = asyncio.Event()  # cleared from :meth:`begin` until :meth:`opened`
        self._open.set()
        self.reset()

    def reset(self, run_id: str | None = None) -> None:
        """Forget what was written: the cell is about to run again (outputs cleared).

        With a ``run_id`` a run starts; with an output store too, the full output of this
        run is kept (as it prints once the document keeps only part of it, else at its
        end; the store keeps a cell's last few runs). The run lasts until :meth:`end_run`.
        """
        policy = self._policy
        self._record: RunRecord | None = None
        if run_id is not None and policy.store is not None:
            key = RunKey(NotebookRef.of_room(self.room_id).file_id, self.cell_id, run_id)
            self._record = RunRecord.begin(policy.store, key, policy.link_prefix, self._log)
        links = self._record.link if self._record is not None else None
        self._model = CellOutputs(policy.budget, links)
        self._masking = OutputMasking(policy.masker) if policy.masker is not None else None
        self._doc_tail: int | None = None  # bytes of the document's last output, a stream
        self._running = run_id is not None
        if run_id is not None:
            self._run_began = time.monotonic()
        self._backlog: list[OutputOp] = []  # edits waiting for the content (forgotten)
        self._journal: RunJournal | None = None
        if run_id is not None and policy.journal is not None:
            self._journal = policy.journal.open(self.room_id, self.cell_id, run_id)
        self._reloads = RunReloads(self._docs, self.room_id, running=run_id is not None)
        self._write_over = False  # the next write replaces every output the cell holds

    async def start_run(self, run_id: str, then: CellMutation) -> None:
        """A queued run starts: the document's outputs of the cell go now, with ``then``.

        Clearing at the start (not when the run was queued) leaves a cell queued several
        times with the outputs of its last run only, whatever the earlier runs printed.
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            self.reset(run_id)
            found = await self._cell()
            if found is None:
                return
            notebook, ycell = found
            with writing(notebook):
                then(notebook, ycell)  # clears the outputs the model no longer holds

    def begin(self, run_id: str) -> None:
        """A run starts whose clearing of the cell another transaction writes (the end of
        the cell run before it, one update instead of two): edits wait in the model, and
        nothing is written, until :meth:`opened`."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.reset(run_id)
        self._open.clear()

    def opened(self) -> None:
        """The document shows the run started: what waited is written from now on."""
        self._open.set()

    async def end_run(
        self,
        then: CellMutation | None = None,
        ending: RunEnd | None = None,
        read_back: CellReading | None = None,
    ) -> None:
        """The run is over: flush as :meth:`flush` does, then let go of the outputs'
        content (the document holds it; a later display update takes it back). The
        journal records ``ending`` (how the run ended) and takes no more edits."""
        self._running = False
        await self.flush(then, read_back)
        if self._journal is not None:
            self._journal.end(ending or RunEnd("ok"))
            self._journal = None

    # -- buffering -------------------------------------------------------------------

    def push(self, op: OutputOp) -> None:
        """Apply an edit; the document shows it within ``interval`` seconds: at once (on
        the event loop's next turn, with what else arrived in this one) when nothing was
        written in the last ``interval``, so a line printed after a quiet spell shows as
        soon as in stock JupyterLab; else with the others of its batch."""
        for masked in self._masking.ops(op) if self._masking is not None else [op]:
            self._take(masked)
        delay = self._last_flush + self._interval - time.monotonic()
        if self._running and _comes_last(op):
            # The run's end follows at once: written with it, in one transaction (see
            # ``_comes_last``); at most ``interval`` later if the end is slow to come.
            delay = max(delay, self._interval)
        self._schedule(delay)

    def _take(self, op: OutputOp) -> None:
        if self._journal is not None:
            self._journal.append(op)  # masked, as the document gets it
        if self._model.forgotten:
            self._backlog.append(op)
        else:
            self._model.apply(op)
            self._keep_record()

    def _keep_record(self) -> None:
        """Hand the run's full record what the model left for it, at once: the edits hold
        the output in full, beyond the budget."""
        if self._record is not None:
            self._record.apply(self._model.take_record_edits())

    def mask(self, text: str) -> str:
        """``text`` with secrets masked, as outputs are (an ``input()`` prompt)."""
        return self._masking.text(text) if self._masking is not None else text

    def has_display(self, display_id: str) -> bool:
        return self._model.has_display(display_id)

    def _schedule(self, delay: float) -> None:
        """Flush in ``delay`` seconds, or on the loop's next turn: the flush's task starts
        then, with no timer to wait for first (a timer of 0 s cost a turn more, behind
        whatever else was ready, such as the end of the run before)."""
        if self._timer is not None or self._flush_coming:
            return
        if delay > 0:
            self._timer = asyncio.get_running_loop().call_later(delay, self._flush_soon)
        else:
            self._flush_soon()

    def _flush_soon(self) -> None:
        self._timer = None
        self._flush_coming = True
        self._flushes.spawn(self.flush(), "writing outputs")

    async def close(self, timeout: float = 3.0) -> None:
        """Write what waits for its batch (a display update from another cell's run, say),
        wait for the writes under way, and start no more: the server is stopping. A run
        whose start was never written (:meth:`begin` without :meth:`opened`) writes
        nothing: its outputs would land on those of the run before."""
        if self._open.is_set():
            try:
                await self.flush()
            except Exception:
                self._log.exception("jupyter-loop could not write the outputs of %s", self.cell_id)
        await self._flushes.close(timeout)

    async def flush(
        self, then: CellMutation | None = None, read_back: CellReading | None = None
    ) -> None:
        """Write what the document has not seen yet; then apply ``then`` in a transaction
        of its own, and call ``read_back`` on the cell once that transaction committed.

        A flush with ``then`` marks a boundary of the run (its start, a prompt, an answer,
        its end): text held back by secret masking is released first, and a long output's
        tail is brought up to date even if it was rewritten less than
        ``catch_up_interval`` ago.
        """
        self._flush_coming = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self._open.wait()
        async with self._lock:
            if then is not None and self._masking is not None:
                for op in self._masking.release():
                    self._take(op)
            if self._record is not None:
                self._record.sync()
            if not self._model.dirty and not self._backlog and then is None:
                return
            if self._model.dirty or self._backlog:
                self._last_flush = time.monotonic()  # outputs written: the next batch waits
            found = await self._cell()
            # A run's journal is open until its last batch is in (see ``reloads``).
            if found is not None and self._journal is not None and self._reloads.heard():
                await self._replay_run()
                found = await self._cell()  # the reload may have gone on meanwhile
            if found is None:
                return
            notebook, ycell = found
            finish = (lambda: then(notebook, ycell)) if then is not None else None
            if not self._write(notebook, ycell, force=then is not None, finish=finish):
                if finish is not None:
                    with writing(notebook):
                        finish()
            if read_back is not None:
                read_back(ycell)
            if not self._running:
                self._keep_whole_run()
                self._model.forget()
        await self._docs.saves.save_if_due(self.room_id, since=self._run_began)

    def _keep_whole_run(self) -> None:
        """The run is over: its record gets the outputs it has not had (all of them, when
        nothing was cut), so every run's outputs are kept, not only cut ones."""
        if self._record is not None:
            self._model.record_whole()
            self._record.apply(self._model.take_record_edits(), fitted=True)
            self._record.sync()
            self._record.ended()

    async def _cell(self) -> tuple[YNotebook, Map] | None:
        """The live notebook and the code cell; ``None`` if either is gone."""
        try:
            notebook = await self._docs.notebook(self.room_id)
            self._index_hint, ycell = find_cell(notebook, self.cell_id, self._index_hint)
        except NotFound as e:
            self._log.info("Dropping outputs of cell %s: %s", self.cell_id, e.message)
            return None
        return (notebook, ycell) if ycell.get("cell_type") == "code" else None

    # -- the notebook reloaded from its file (:mod:`.reloads`) -------------------------

    async def _replay_run(self) -> None:
        """Rebuild the model from the run's journal, to be written over the cell's outputs."""
        journal, store = self._journal, self._policy.journal
        assert journal is not None and store is not None
        ops = await store.ops_so_far(journal)
        if ops is None:  # the journal kept part of the run: show what comes next
            self._log.info("jupyter-loop cannot rewrite cell %s whole after a reload", self.cell_id)
            self._reloads.give_up()
            return
        # No await from here on: edits pushed since the journal was read go to this model.
        links = self._record.link if self._record is not None else None
        self._model = CellOutputs.replayed(ops, self._policy.budget, links)
        self._write_over = True  # what the cell holds then, whatever it is, goes
        self._log.info("jupyter-loop rewrites the outputs of cell %s after a reload", self.cell_id)

    # -- writing ---------------------------------------------------------------------

    def _write(
        self,
        notebook: YNotebook,
        ycell: Map,
        *,
        force: bool,
        finish: Callable[[], None] | None = None,
    ) -> bool:
        """Bring the document up to date; ``finish`` joins the last transaction (one update
        less for every tab and the YStore). Returns whether ``finish`` ran."""
        outputs = ycell.get("outputs")
        if not isinstance(outputs, Array):
            with writing(notebook):
                ycell["outputs"] = outputs = Array()
        if self._model.forgotten:
            self._model.restore([output.to_py() for output in outputs])
            self._doc_tail = tail_length(outputs)
            for op in self._backlog:
                self._model.apply(op)
            self._backlog.clear()
        if self._write_over:
            self._write_over = False
            self._model.holds_others(len(outputs))
            self._doc_tail = tail_length(outputs)
        self._resync(outputs)
        self._keep_record()
        plan = self._model.plan(lambda index: outputs[index].to_py())
        if plan is None:
            return False
        policy = self._policy
        now = policy.clock()
        wait = self._last_rewrite + policy.catch_up_interval - now
        if plan.throttle and not force and wait > 0:
            self._schedule(wait)  # a long output's tail moves on at most this often
            return False
        apply_plan(notebook.ydoc, outputs, plan, finish)
        self._model.committed()
        if plan.throttle:
            self._last_rewrite = now
        self._doc_tail = tail_length(outputs)
        return True

    def _resync(self, outputs: Array) -> None:
        """Start over from what the document holds if someone else changed the outputs."""
        if len(outputs) == self._model.doc_count and tail_length(outputs) == self._doc_tail:
            return
        self._log.debug("Outputs of cell %s changed elsewhere; resynchronising", self.cell_id)
        self._model.rebase([output.to_py() for output in outputs])
        self._doc_tail = tail_length(outputs)


def _comes_last(op: OutputOp) -> bool:
    """A cell's value or its error: ipykernel sends it just before the run's reply.

    Written at once, it cost a transaction of its own (encoded, sent to every tab,
    stored) milliseconds before the run's end wrote another, while the kernel finished
    the run: ``tests/execution/test_result_with_its_end.py``, ``bench/execution_overhead.py``.
    """
    return isinstance(op, AppendOutput) and op.output.get("output_type") in (
        "execute_result",
        "error",
    )
