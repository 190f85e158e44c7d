"""Configuration of what happens to outputs on their way into the notebook, mixed into
``JupyterLoopApp`` (``c.JupyterLoopApp.*``): the per-cell budget, the store of full
outputs. Which secrets are masked is ``MaskingConfig``'s (shared with the agent).
"""

from __future__ import annotations

import logging
from pathlib import Path

from traitlets import Bool, Float, Int
from traitlets.config import Configurable

from ...secrets import SecretMasker
from ..durability.wal import OutputJournal
from ..full_outputs.store import FileOutputStore
from .budget import MIN_TOTAL, OutputBudget
from .writer import OutputPolicy

OUTPUTS_PATH = "api/jupyter-loop/outputs"
"""Where the full outputs are served, relative to the server's base URL."""


class OutputsConfig(Configurable):
    """Output budget and the store of full outputs."""

    output_budget_bytes = Int(
        256 * 1024,
        allow_none=True,
        config=True,
        help=(
            "Bytes of output each cell keeps in the notebook, counted as the .ipynb stores "
            f"them (default 262144, 256 KB; at least {MIN_TOTAL}). A longer output keeps its "
            "start and its end with a marker between them, a single output over half the "
            "budget is replaced by a placeholder; both link to the full output, kept on the "
            "server. None or 0: keep everything in the notebook."
        ),
    )

    full_output_max_bytes = Int(
        512 * 1024 * 1024,
        allow_none=True,
        config=True,
        help=(
            "Bytes of one run's full output kept on the server (default 536870912, 512 MB); "
            "later output of that run is dropped. None or 0: no limit."
        ),
    )

    full_output_runs_per_cell = Int(
        3,
        config=True,
        help=(
            "Runs of each cell whose full output is kept on the server (default 3, at least "
            "1), the newest: the History view shows their outputs (in full where the "
            "notebook keeps only part)."
        ),
    )

    full_output_store_max_bytes = Int(
        2 * 1024 * 1024 * 1024,
        allow_none=True,
        config=True,
        help=(
            "Bytes of full output kept on the server, all runs together (default "
            "2147483648, 2 GB); the oldest runs go first, when a new run's full output is "
            "kept (at most every minute for runs that fit the notebook's output budget). "
            "None or 0: no limit."
        ),
    )

    full_output_max_age_days = Float(
        30.0,
        allow_none=True,
        config=True,
        help=(
            "Full outputs untouched for this many days are removed when the server starts "
            "(default 30). None or 0: keep them until their cell runs again."
        ),
    )

    journal_interval = Float(
        0.2,
        allow_none=True,
        config=True,
        help=(
            "Outputs of runs in flight are journalled on disk, so a crash of the server "
            "loses at most this many seconds of them: their journal is written (group "
            "commit) at most this often (default 0.2). None or 0: no journal; a crash "
            "loses what came since the notebook was last saved."
        ),
    )

    journal_fsync = Bool(
        True,
        config=True,
        help=(
            "fsync the output journal at every commit (default True), so it survives a "
            "power cut as well as a killed server. False leaves the flushing to the OS."
        ),
    )

    def output_journal(self, data_dir: str, log: logging.Logger) -> OutputJournal | None:
        """The journal of outputs of runs in flight, under ``data_dir``/journal."""
        if not self.journal_interval:
            return None
        budget = self.output_budget_bytes or 0
        full = self.full_output_max_bytes
        return OutputJournal(
            Path(data_dir) / "journal",
            log,
            fsync=self.journal_fsync,
            interval=self.journal_interval,
            max_run_bytes=(budget + full) if full else None,
        )

    def output_store(self, data_dir: str) -> FileOutputStore:
        """The store of full outputs, under ``data_dir``/outputs."""
        return FileOutputStore(
            Path(data_dir) / "outputs",
            max_run_bytes=self.full_output_max_bytes or None,
            max_age_days=self.full_output_max_age_days or None,
            runs_per_cell=self.full_output_runs_per_cell,
            max_bytes=self.full_output_store_max_bytes or None,
        )

    def output_policy(
        self,
        store: FileOutputStore,
        base_url: str,
        masker: SecretMasker | None,
        journal: OutputJournal | None = None,
    ) -> OutputPolicy:
        """How the writer treats outputs: masking, budget, store and links."""
        budget = self.output_budget_bytes
        return OutputPolicy(
            budget=OutputBudget.from_total(budget) if budget else None,
            masker=masker,
            store=store,
            link_prefix=f"{base_url.rstrip('/')}/{OUTPUTS_PATH}",
            journal=journal,
        )
