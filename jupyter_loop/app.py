"""The jupyter-loop server extension: configuration, services and routes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from functools import partial
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.serverapp import ServerApp
from tornado.ioloop import IOLoop
from traitlets import Bool, Enum, Float, Int, Unicode, default

from .access.token_handlers import route_table as token_routes
from .access.tokens import AccessTokens
from .acp.handlers import SETTING as ACP
from .acp.handlers import route_table as acp_routes
from .acp.kept import KeptSessions
from .acp.traits import AcpConfig
from .agent import proposals
from .agent.handlers import route_table as agent_routes
from .agent.traits import AgentConfig
from .assistant_services import SETTING as ASSISTANT
from .assistant_services import Assistant, AssistantInputs
from .completion.handlers import route_table as completion_routes
from .completion.traits import CompletionConfig
from .document import LiveDocuments
from .document.file_guards import start_file_guards
from .document.known_files import KnownFiles
from .execution.durability.ledger import RunLedger
from .execution.full_outputs.handlers import route_table as output_routes
from .execution.handlers import route_table as execution_routes
from .execution.history import RunHistory
from .execution.outputs.traits import OutputsConfig
from .execution.queue import QueueSettings
from .execution.run_socket import route_table as run_socket_routes
from .execution.service import ExecutionService
from .history.traits import HistoryConfig
from .history.versions import VersionStore
from .history.versions.handlers import route_table as version_routes
from .history.versions.keeper import VersionKeeper
from .keeper.adoption import KeptKernels, adopt_kept_kernels, kept_kernel_ids, let_kernels_live
from .keeper.settings import keep_kernels_config, kernels_root
from .loop_health import LoopMonitor, freeze_startup_heap
from .masking_traits import MaskingConfig
from .mcp_server.handler import route_table as mcp_routes
from .mcp_server.traits import ExternalConfig, McpLimits
from .one_session import give_one_session
from .owner_only import tighten
from .saves import choose_replacing_saves
from .state_files import DamagedFiles
from .status_handlers import route_table as status_routes
from .stopping import release_worker_threads_at_exit, stop_on_sigint
from .ystore import choose_compact_store, set_aside_unreadable_store


def all_routes() -> list[tuple[str, Any]]:
    """Every route of the extension (under ``{base_url}``); docs/rights.md lists their rights."""
    return [
        *execution_routes(),
        *run_socket_routes(),
        *output_routes(),
        *agent_routes(),
        *completion_routes(),
        *mcp_routes(),
        *status_routes(),
        *version_routes(),
        *token_routes(),
        *acp_routes(),
    ]


class JupyterLoopApp(
    ExtensionApp,
    AgentConfig,
    OutputsConfig,
    MaskingConfig,
    CompletionConfig,
    ExternalConfig,
    AcpConfig,
    HistoryConfig,
):
    """Runs notebook cells on the server and writes their outputs to the shared notebook."""

    name = "jupyter_loop"

    batch_interval = Float(
        0.05,
        config=True,
        help=(
            "Seconds over which a cell's outputs, and the assistant's streamed text, are "
            "gathered into one write into the shared notebook (default 0.05)."
        ),
    )

    save_interval = Float(
        30.0,
        allow_none=True,
        config=True,
        help=(
            "While a cell writes outputs, save the notebook at least this often, in seconds "
            "(default 30; longer while many notebooks are written into, a quarter second "
            "per notebook, and counted from the end of the last save). Every run also "
            "saves when it ends; the output journal, not the file, keeps what a crash "
            "would lose. None or 0 leaves saving to autosave alone."
        ),
    )

    freeze_startup_heap = Bool(
        True,
        config=True,
        help=(
            "Once the server runs, keep the objects it holds then (modules, classes, the "
            "apps: they live as long as the process) out of Python's garbage collections "
            "(gc.freeze), so a full collection under load walks only what came after "
            "(default True). A full collection of a busy server's objects held its event "
            "loop for seconds."
        ),
    )

    loop_stall_warning = Float(
        1.0,
        config=True,
        help=(
            "Seconds the server's event loop may not come back before the server logs a "
            "warning naming what holds it (default 1). The watchdog looks every 0.1 s: "
            "set 0.15 to name holds of about 50 ms and more, as a capacity test does."
        ),
    )

    kernel_ready_timeout = Float(
        60.0,
        config=True,
        help="Seconds to wait for a starting kernel before the run fails (default 60).",
    )

    liveness_interval = Float(
        2.0,
        config=True,
        help=(
            "Seconds between checks that the kernel of a running cell is alive (default 2); "
            "for a gateway kernel each check is one request to the gateway."
        ),
    )

    data_dir = Unicode(
        "",
        config=True,
        help=(
            "Directory for jupyter-loop's server-side state (runs in flight and their output "
            "journals, full outputs, conversations and the assistant's journals, the run "
            "history, kept kernels, the notebook files as the server last knew them). "
            "Default: jupyter_loop/ under the Jupyter data directory."
        ),
    )

    keep_kernels = Enum(
        ["crash", "always", "never"],
        default_value="crash",
        config=True,
        help=(
            "When local kernels outlive the server (each runs under a small keeper "
            "process that journals its output): 'crash' (default) across an unclean end "
            "only (a clean stop shuts them down), 'always' also across a clean stop (an "
            "upgrade), 'never' not at all (kernels end with the server)."
        ),
    )

    orphan_kernel_timeout = Float(
        600.0,
        config=True,
        help=(
            "Seconds a kept kernel waits for a server to come back before its keeper shuts "
            "it down (default 600); its output stays for the next start to replay."
        ),
    )

    kept_journal_bytes = Int(
        100 * 2**20,
        config=True,
        help="Bound of a kept kernel's output journal on disk, in bytes (default 100 MiB).",
    )

    def _link_jupyter_server_extension(self, serverapp: ServerApp) -> None:
        super()._link_jupyter_server_extension(serverapp)
        choose_compact_store(serverapp.config)
        set_aside_unreadable_store(serverapp.config, self.log)
        choose_replacing_saves(serverapp)
        if self.keep_kernels != "never":
            keep_kernels_config(
                serverapp.config,
                Path(self.data_dir),
                orphan_timeout=self.orphan_kernel_timeout,
                max_journal_bytes=self.kept_journal_bytes,
                masking=self.masking_spec(self.openai_api_key),
            )

    @default("data_dir")
    def _default_data_dir(self) -> str:
        return str(Path(jupyter_data_dir()) / "jupyter_loop")

    def initialize_settings(self) -> None:
        server = self.serverapp
        if server is None:  # only possible when the extension is misloaded
            raise RuntimeError("jupyter-loop must be loaded by a Jupyter server")
        # First: a start that fails below must still let the server stop on a signal.
        release_worker_threads_at_exit()
        # A damaged state file is moved aside and its feature starts empty (GET status).
        self.damaged = DamagedFiles(self.log)
        tightened = tighten(Path(self.data_dir))  # state kept before it was made private
        if tightened:
            self.log.info(
                "jupyter-loop: made %d files in %s private", len(tightened), self.data_dir
            )
        give_one_session(server.session_manager)  # one kernel per notebook, whoever asks
        known_files = KnownFiles(Path(self.data_dir) / "known_files", self.log)
        self.documents = LiveDocuments(
            server.web_app.settings, self.log, self.save_interval, known_files
        )
        # The guards between files and live documents, in the order they must see a save.
        self.file_guards = start_file_guards(
            self.documents,
            known_files,
            server.contents_manager,
            server.web_app.settings,
            Path(self.data_dir),
            proposals.keep_offline_edits,
            self.log,
        )
        self.versions: VersionKeeper | None = None
        if self.versions_max > 0:
            store = VersionStore(
                Path(self.data_dir) / "versions.sqlite3",
                max_per_notebook=self.versions_max,
                max_bytes=self.versions_max_bytes,
                log=self.log,
                damaged=self.damaged,
            )
            self.versions = VersionKeeper(store, self.documents, server.contents_manager, self.log)
            self.versions.start()
        self.outputs = self.output_store(self.data_dir)
        self.outputs.sweep()
        masker = self.secret_masker(self.openai_api_key, environs=self.agent_environments())
        self.journal = self.output_journal(self.data_dir, self.log)
        if self.journal is not None:
            self.journal.start()
            self.documents.saves.before_saving(self.journal.commit)
            self.documents.saves.on_saved(self.journal.saved)
        outputs = self.output_policy(self.outputs, server.base_url, masker, self.journal)
        ledger = RunLedger(Path(self.data_dir) / "runs.jsonl", self.log, self.damaged)
        if self.journal is not None:
            self.journal.before_removing(ledger.drop_now)
        self.kept: KeptKernels | None = None
        if self.keep_kernels != "never":
            # Before anything lists sessions: those of adopted kernels must not be culled.
            busy = {entry.kernel_id for entry in ledger.load() if entry.state == "running"}
            root = kernels_root(Path(self.data_dir))
            self.kept = adopt_kept_kernels(
                root, server.kernel_manager, self.log, busy, self.damaged
            )
        self.run_history = (
            RunHistory(
                Path(self.data_dir) / "history.sqlite3",
                max_runs_per_cell=self.history_max_runs_per_cell,
                max_bytes=self.history_max_bytes,
                log=self.log,
                damaged=self.damaged,
            )
            if self.history
            else None
        )
        self.execution = ExecutionService(
            self.documents,
            server.kernel_manager,
            server.session_manager,
            server.event_logger,
            QueueSettings(
                batch_interval=self.batch_interval,
                kernel_ready_timeout=self.kernel_ready_timeout,
                liveness_interval=self.liveness_interval,
                outputs=outputs,
                history=self.run_history,
            ),
            self.log,
            ledger,
            self.kept,
        )
        self.execution.start()
        # How late the event loop runs, and what holds it when it stalls (the status says).
        self.loop_monitor = LoopMonitor(self.log, warn_after=self.loop_stall_warning)
        if self.freeze_startup_heap:  # once the loop runs: every extension is loaded
            IOLoop.current().add_callback(freeze_startup_heap)
        # After the freeze: its own full collection is the start's, not a stall.
        IOLoop.current().add_callback(self.loop_monitor.start)
        # Runs cut off by the previous server process are closed once the server runs
        # (the collaboration extension is set up by then).
        IOLoop.current().add_callback(self._recover)
        self.settings.update(
            {
                "jupyter_loop_execution": self.execution,
                "jupyter_loop_outputs": self.outputs,
                # What a cell's outputs may be put back at (History): what the notebook keeps.
                "jupyter_loop_output_budget": self.output_budget_bytes or None,
                "jupyter_loop_history": self.run_history,
                "jupyter_loop_versions": self.versions,
                "jupyter_loop_damaged": self.damaged,
                "jupyter_loop_loop_monitor": self.loop_monitor,
            }
        )
        # Built at the first request that needs them (the module says why).
        self.assistant = Assistant(
            AssistantInputs(
                documents=self.documents,
                execution=self.execution,
                contents=server.contents_manager,
                settings=partial(self.agent_settings, self.data_dir, self.batch_interval, masker),
                completion_model=self.completion_model,
                approval_timeout=self.external_approval_timeout,
                mcp_client_approvals=self.mcp_client_approvals,
                mcp_idle_timeout=self.mcp_session_idle_timeout,
                mcp_tasks_dir=Path(self.data_dir) / "mcp_tasks",
                log=self.log,
                mcp_limits=McpLimits(self.mcp_result_tokens, self.mcp_progress_interval),
            )
        )
        tokens = AccessTokens(Path(self.data_dir) / "tokens.json", self.damaged)
        kept = KeptSessions(Path(self.data_dir) / "acp_sessions.json", self.damaged)
        self.acp = self.acp_service(server, self.documents, tokens, self.log, kept)
        IOLoop.current().add_callback(self.acp.start)
        self.settings.update(
            {ASSISTANT: self.assistant, "jupyter_loop_tokens": tokens, ACP: self.acp}
        )
        stop_on_sigint(server, self.log)

    async def _recover(self) -> None:
        try:
            closed = await self.execution.recover()
        except Exception:
            self.log.exception("jupyter-loop could not close the runs of the last session")
            return
        if closed:
            self.log.info("jupyter-loop closed %d run(s) cut off by a server restart", closed)

    def initialize_handlers(self) -> None:
        self.handlers.extend(all_routes())

    async def stop_extension(self) -> None:
        # Never raises: the server's shutdown stops at the first extension that raises,
        # and then waited forever, up (a start that failed half-way left parts missing).
        try:
            await self._stop_parts()
        except Exception:
            self.log.exception("jupyter-loop could not stop cleanly")

    async def _stop_parts(self) -> None:
        # Each part stops in its turn even if one before it failed or took too long: a
        # part left running (a thread, a journal) must not keep the server from exiting.
        if not hasattr(self, "execution"):  # its start failed: nothing of ours to stop
            return
        kernels = self.serverapp.kernel_manager if self.serverapp else None
        leaving = kept_kernel_ids(kernels) if self.keep_kernels == "always" else set()
        self.execution.stopping(leaving)  # before a stopping agent's call drops its runs
        assistant = self.assistant.built
        if assistant is not None:
            await self._stop_part("completions", assistant.completion.stop())
            await self._stop_part("the MCP endpoint", assistant.mcp.stop())
            await self._stop_part("the assistant", assistant.agent.stop())
        await self._stop_part("ACP agents", self.acp.stop())  # after their turns stopped
        await self._stop_part("runs", self.execution.stop(leaving))
        await self._stop_part("documents", self.documents.stop())
        await self._stop_part("the file guards", self.file_guards.stop())
        if self.versions is not None:  # after the last saves, which it keeps
            await self._stop_part("versions", self.versions.stop())
        if self.run_history is not None:
            await self._stop_part("the run history", asyncio.to_thread(self.run_history.close))
        if self.journal is not None:
            await self._stop_part("the output journal", self.journal.stop())
        await self._stop_part("the loop monitor", self.loop_monitor.stop())
        if leaving:  # out of the kernel manager before the server shuts its kernels down
            let_kernels_live(kernels, self.log)

    async def _stop_part(self, name: str, stopping: Awaitable[Any], timeout: float = 10) -> None:
        try:
            await asyncio.wait_for(stopping, timeout=timeout)
        except Exception:
            self.log.exception("jupyter-loop could not stop %s in %g s", name, timeout)
