"""One cell's run: turns the kernel's answer into output edits and a final outcome."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..records import InputRequest
from .outputs.ops import UpdateDisplay, op_from_message
from .outputs.writer import CellWriter
from .run_origin import KeptSource, RunOrigin

KERNEL_DIED = "The kernel died while this cell was running."
KERNEL_RESTARTED = "The kernel died and was restarted while this cell ran."

IDLE_GRACE = 2.0
"""Seconds of IOPub silence after the reply before a run ends without its idle status:
ZeroMQ drops IOPub messages when a kernel floods faster than they are read, and the idle
status may be one of them."""


@dataclass(frozen=True)
class CellJob:
    """A code cell waiting in a kernel's queue.

    ``code`` is the source it had when queued; a job that waited runs the source the cell
    has when it is handed to the kernel instead (see ``KernelQueue``), which must still
    hash to ``approved_hash`` when the run was approved for a given source.
    """

    room_id: str
    cell_id: str
    code: str
    run_id: str
    by: str
    record_timing: bool = False
    marked_running: bool = False  # queued straight into the running state
    approved_hash: str | None = None
    index_hint: int | None = None  # where the cell was when queued (saves a search)
    origin: RunOrigin | None = None  # who started it, through what (the run history)
    queued_at: float = field(default_factory=time.time)
    kept: KeptSource | None = None  # a run taken over: the source its ledger line kept


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended. ``status`` is ok, error, aborted, interrupted or cut_off (or
    running: it had not ended when its caller stopped waiting)."""

    status: str
    execution_count: int | None = None
    note: str | None = None
    payload: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stops_queue(self) -> bool:
        return self.status != "ok"


class CellRun:
    """Listener for one execute request (see :class:`~.kernel.RunListener`)."""

    def __init__(
        self,
        job: CellJob,
        writer: CellWriter,
        *,
        on_display_update: Callable[[UpdateDisplay], None],
        on_input_request: Callable[[CellRun, dict[str, Any]], None],
        on_count: Callable[[int], None] | None = None,
    ) -> None:
        self.job = job
        self._on_count = on_count
        self.writer = writer
        self._on_display_update = on_display_update
        self._on_input_request = on_input_request
        self._reply: dict[str, Any] | None = None
        self._idle = False
        self.timing: dict[str, str] = {}
        self.pending_input: tuple[InputRequest, dict[str, Any]] | None = None
        self._captured_by: set[str] = set()  # Output widgets capturing this run's output
        self._quiet: asyncio.TimerHandle | None = None  # see IDLE_GRACE
        self.msg_id: str | None = None  # of its execute request, once handed to the kernel
        self.source: str | None = None  # what the kernel was handed (the run history)
        self.started_at: float | None = None
        self.ended_at: float | None = None  # when its outcome was known (see drop_queued)
        self.end_shown = False  # its end is in the document (see KernelQueue.pending)
        self.kernel_run = ""  # which start of the kernel ran it (see KernelLine.kernel_run)
        self.taken_over = False  # started by an earlier server process (``kept_runs.resume_run``)
        self.outputs_digest = ""
        self.done: asyncio.Future[RunOutcome] = asyncio.get_running_loop().create_future()

    def on_iopub(self, message: dict[str, Any]) -> None:
        if self._quiet is not None:
            self._wait_for_idle()
        kind = message["header"]["msg_type"]
        if kind == "status":
            state = message["content"].get("execution_state")
            self._stamp(f"iopub.status.{state}", message)
            if state == "idle":
                self._idle = True
                self._maybe_finish()
            return
        if kind == "execute_input":
            self._stamp("iopub.execute_input", message)
            count = message["content"].get("execution_count")
            if self._on_count is not None and isinstance(count, int):
                self._on_count(count)
            return
        if kind == "comm_msg":
            self._track_output_widgets(message)
            return
        if self._captured_by:
            return  # an ipywidgets Output widget shows these, in the tab, as in JupyterLab
        op = op_from_message(message)
        if isinstance(op, UpdateDisplay):
            self._on_display_update(op)
        elif op is not None:
            self.writer.push(op)

    def _track_output_widgets(self, message: dict[str, Any]) -> None:
        """Follow ``with output_widget:`` blocks of this run.

        Inside one, the kernel still sends outputs as children of the execute request;
        JupyterLab diverts them into the widget, so they must not land in the cell.
        """
        content = message.get("content", {})
        data = content.get("data") or {}
        state = data.get("state") or {}
        if data.get("method") != "update" or "msg_id" not in state:
            return
        comm_id = str(content.get("comm_id", ""))
        parent = (message.get("parent_header") or {}).get("msg_id")
        if state["msg_id"] and state["msg_id"] == parent:
            self._captured_by.add(comm_id)
        else:
            self._captured_by.discard(comm_id)

    def on_reply(self, message: dict[str, Any]) -> None:
        if message["header"]["msg_type"] != "execute_reply":
            return
        self._reply = message
        started = (message.get("metadata") or {}).get("started")
        if started:
            self.timing["shell.execute_reply.started"] = str(started)
        self._stamp("shell.execute_reply", message)
        self._maybe_finish()
        if not self.done.done():
            self._wait_for_idle()

    def _wait_for_idle(self) -> None:
        if self._quiet is not None:
            self._quiet.cancel()
        self._quiet = asyncio.get_running_loop().call_later(IDLE_GRACE, self._idle_lost)

    def _idle_lost(self) -> None:
        self._idle = True
        self._maybe_finish()

    @property
    def interrupted(self) -> bool:
        """The kernel says the run was interrupted (its error is a ``KeyboardInterrupt``)."""
        content = (self._reply or {}).get("content", {})
        return content.get("status") == "error" and content.get("ename") == "KeyboardInterrupt"

    def on_input_request(self, message: dict[str, Any]) -> None:
        self._on_input_request(self, message)

    def end(self, outcome: RunOutcome) -> None:
        """End the run from outside (kernel restarted or died, server stopping)."""
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        if not self.done.done():
            self.ended_at = time.time()
            self.done.set_result(outcome)

    def _maybe_finish(self) -> None:
        if self._reply is None or not self._idle:
            return
        content = self._reply.get("content", {})
        status = content.get("status", "error")
        count = content.get("execution_count")
        self.end(
            RunOutcome(
                status="ok" if status == "ok" else ("aborted" if status == "aborted" else "error"),
                execution_count=count if isinstance(count, int) else None,
                payload=list(content.get("payload") or []),
            )
        )

    def _stamp(self, label: str, message: dict[str, Any]) -> None:
        date = message.get("header", {}).get("date")
        if date is not None:
            self.timing[label] = date if isinstance(date, str) else date.isoformat()
