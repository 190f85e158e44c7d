"""The assistant's services (the agent, inline completions, the MCP endpoint), built at the
first request that needs one.

Everything else of the extension is built as the server starts; these three are not.
Importing them (model providers, the context builder, the MCP SDK's session manager, the
tasks store: about forty of our modules) was a quarter of the extension's import, and
building them imported the configured provider's SDK (openai: 0.7 s), both on every
``jupyter lab`` start. Nothing in them has to happen before the first request: a turn cut
off by a restart is closed when its conversation is read, and the MCP tasks kept on disk
are only ever read by MCP requests. In a browser the first tab asks at once (the
completion status), so the build comes with the first page load, in a worker thread
(:class:`Assistant`).

Rejected: building them in a worker thread as the server starts. The start would not
wait, but every start would pay for them, used or not, while the server loads notebooks
and kernels.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .handlers import LoopHandler
from .mcp_server.traits import McpLimits

SETTING = "jupyter_loop_assistant"
"""The server's setting that holds the :class:`Assistant`."""

if TYPE_CHECKING:
    from .agent.service import AgentService
    from .agent.settings import AgentSettings
    from .completion.service import CompletionService
    from .document import LiveDocuments
    from .execution.service import ExecutionService
    from .mcp_server.endpoint import McpEndpoint


@dataclass(frozen=True)
class AssistantServices:
    agent: AgentService
    completion: CompletionService
    mcp: McpEndpoint


@dataclass(frozen=True)
class AssistantInputs:
    """What the services are built from: the server's parts and the extension's settings."""

    documents: LiveDocuments
    execution: ExecutionService
    contents: Any  # the server's contents manager
    settings: Callable[[], AgentSettings]
    """The agent's settings from the extension's traits (made at build: see
    ``AgentConfig.agent_settings``)."""
    completion_model: str | None
    approval_timeout: float
    """Seconds an outside agent's call waits for a person's approval."""
    mcp_client_approvals: bool
    """Whether an MCP client's form may answer its own run's approval."""
    mcp_idle_timeout: float
    mcp_tasks_dir: Path
    log: logging.Logger
    mcp_limits: McpLimits = McpLimits()


def build(inputs: AssistantInputs) -> AssistantServices:
    """The three services, wired as the server's start used to wire them."""
    from .agent.service import AgentService
    from .completion.service import CompletionService
    from .completion.variables import KernelVariables
    from .mcp_server.endpoint import McpEndpoint

    agent = AgentService(inputs.documents, inputs.execution, inputs.settings(), inputs.log)
    agent.start()
    agent.outside.approval_timeout = inputs.approval_timeout
    agent.outside.client_approvals = inputs.mcp_client_approvals
    completion = CompletionService(
        inputs.documents,
        agent.settings,
        inputs.completion_model,
        inputs.log,
        variables=KernelVariables(inputs.execution),
        budgets=agent.budgets,
    )
    mcp = McpEndpoint(
        agent.outside,
        inputs.contents,
        inputs.log,
        inputs.mcp_idle_timeout,
        tasks_dir=inputs.mcp_tasks_dir,
        limits=inputs.mcp_limits,
    )
    return AssistantServices(agent, completion, mcp)


class Assistant:
    """The assistant's services once a request has needed them; what the handlers hold.

    They are built in a worker thread: the first request comes as the first tab loads,
    with a dozen others, and the build (about 0.1 s, plus the model SDK's import when a
    provider is configured: openai takes 0.7 s) must not hold those up on the event loop.
    Requests that come meanwhile wait for the same build; a build that failed is tried
    again by the next request.
    """

    def __init__(self, inputs: AssistantInputs) -> None:
        self._inputs = inputs
        self._services: AssistantServices | None = None
        self._building: asyncio.Future[AssistantServices] | None = None

    async def ready(self) -> AssistantServices:
        if self._services is not None:
            return self._services
        if self._building is None:
            self._building = asyncio.ensure_future(asyncio.to_thread(build, self._inputs))
        building = self._building
        try:
            services = await asyncio.shield(building)
        except Exception:
            if self._building is building:
                self._building = None
            raise
        if self._services is None:
            self._services = services
            self._inputs.log.info("jupyter-loop: the assistant's services are ready")
        return self._services

    @property
    def services(self) -> AssistantServices:
        if self._services is None:
            raise RuntimeError("the assistant's services are read before ready() built them")
        return self._services

    @property
    def agent(self) -> AgentService:
        return self.services.agent

    @property
    def completion(self) -> CompletionService:
        return self.services.completion

    @property
    def mcp(self) -> McpEndpoint:
        return self.services.mcp

    @property
    def built(self) -> AssistantServices | None:
        """The services if a request has built them; stopping the server builds nothing."""
        return self._services


class AssistantHandler(LoopHandler):
    """A handler of the assistant's services: they are ready before its method runs (for
    a request that is signed in; the method's own check refuses the others)."""

    @property
    def assistant(self) -> Assistant:
        return self.settings[SETTING]

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if self.current_user is not None:
            await self.assistant.ready()
