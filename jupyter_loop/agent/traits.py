"""The agent's configuration traits, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``).

Kept beside the agent so the app module stays small; every trait states its default and
what ``None`` means.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from traitlets import Enum, Float, Int, List, Unicode
from traitlets.config import Configurable

from .context import DEFAULT_BUDGET_TOKENS
from .payloads import APPROVAL_POLICIES

if TYPE_CHECKING:
    from ..secrets import SecretMasker
    from .settings import AgentSettings


class AgentConfig(Configurable):
    """Settings of the server-side agent."""

    agent_provider = Enum(
        ["openai", "ollama"],
        default_value=None,
        allow_none=True,
        config=True,
        help=(
            "The model provider: 'openai' (OpenAI or any OpenAI-compatible server) or 'ollama' "
            "(native Ollama API). Default None: 'openai' if OPENAI_API_KEY or OPENAI_BASE_URL "
            "(or openai_api_key / openai_base_url) is set, else 'ollama' if OLLAMA_HOST (or "
            "ollama_host) is set, else no provider: the agent is off and says how to set one."
        ),
    )
    agent_model = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "The model the agent uses unless a turn (the panel's model picker) names one. "
            "Default None: gpt-4o-mini on OpenAI's own API, else the first model the server "
            "lists."
        ),
    )
    allowed_models = List(
        Unicode(),
        default_value=None,
        allow_none=True,
        config=True,
        help=(
            "The models turns, inline completions and the panel's picker may use: names or "
            "shell-style patterns ('gpt-4o-mini', 'llama3*'). A request naming another model "
            "is refused (403); with no model named, agent_model (or completion_model) is used "
            "if allowed, else the first allowed model the server lists. Default None: any."
        ),
    )
    budget_tokens_per_user_day = Int(
        None,
        allow_none=True,
        config=True,
        help=(
            "Model tokens (input and output, as the model server counts them) a user's turns "
            "and inline completions may use per UTC day; then model calls are refused with a "
            "plain message until midnight UTC. Default None: no cap."
        ),
    )
    budget_tokens_per_notebook_day = Int(
        None,
        allow_none=True,
        config=True,
        help="The same cap per notebook, whoever asks. Default None: no cap.",
    )
    openai_api_key = Unicode(
        None,
        allow_none=True,
        config=True,
        help="API key for OpenAI or a compatible server. Default None: OPENAI_API_KEY.",
    )
    openai_base_url = Unicode(
        None,
        allow_none=True,
        config=True,
        help=(
            "Root URL of an OpenAI-compatible API (e.g. http://127.0.0.1:8000/v1). "
            "Default None: OPENAI_BASE_URL, else OpenAI's."
        ),
    )
    ollama_host = Unicode(
        None,
        allow_none=True,
        config=True,
        help="Ollama's address. Default None: OLLAMA_HOST, else http://127.0.0.1:11434.",
    )
    ollama_num_ctx = Int(
        None,
        allow_none=True,
        config=True,
        help="Context window (num_ctx) asked of Ollama. Default None: Ollama's own (small).",
    )
    agent_max_steps = Int(
        25,
        config=True,
        help="Model calls per agent turn at most (default 25); the turn then ends with a note.",
    )
    agent_context_tokens = Int(
        DEFAULT_BUDGET_TOKENS,
        config=True,
        help=(
            f"Prompt budget per model call, in tokens (default {DEFAULT_BUDGET_TOKENS}); capped "
            "at three quarters of the model's context window when the provider reports it."
        ),
    )
    agent_request_timeout = Float(
        120.0,
        config=True,
        help="Seconds to wait for the model server to connect or send more (default 120).",
    )
    agent_images = Enum(
        ["auto", "on", "off"],
        default_value="auto",
        config=True,
        help=(
            "Whether the agent shows image outputs (plots) to models that take images. "
            "'auto' (default): Ollama models whose /api/show lists 'vision'; on "
            "OpenAI-compatible servers, every model until its server refuses images (the step "
            "is then sent again without them, and that model gets none until the server "
            "restarts). 'on': always on OpenAI-compatible servers (a refusal is an error). "
            "'off': never; models get a text description (type, size). Secret masking covers "
            "text only: images go to the model as they are."
        ),
    )
    agent_images_per_step = Int(
        4,
        config=True,
        help=(
            "Images sent with one model call at most (default 4), each shrunk to 1024 pixels "
            "on its longest side; the rest are described in text."
        ),
    )
    agent_image_bytes = Int(
        3 * 1024 * 1024,
        config=True,
        help="Bytes of images (after shrinking) sent with one model call at most (default 3 MiB).",
    )
    approval_policy = Enum(
        list(APPROVAL_POLICIES),
        default_value="ask",
        config=True,
        help=(
            "Whether the agent may run cells: 'ask' each time (default), 'turn' (once allowed, "
            "for the rest of the turn), 'always', or 'never'. A turn may ask for its own."
        ),
    )

    def agent_settings(
        self, data_dir: str, stream_interval: float, masker: SecretMasker | None
    ) -> AgentSettings:
        # Imported here, as the assistant is built (``assistant_services``), not as the
        # server starts: these bring in the image and token-budget parts of the assistant.
        from ..notebook_view.vision import ImageBudget
        from ..providers.allowed_models import ModelAllowList
        from ..providers.token_budgets import BudgetLimits
        from .settings import AgentSettings

        return AgentSettings(
            provider=self.agent_provider,
            model=self.agent_model,
            budget_limits=BudgetLimits(
                self.budget_tokens_per_user_day, self.budget_tokens_per_notebook_day
            ),
            allowed_models=ModelAllowList(
                None if self.allowed_models is None else tuple(self.allowed_models)
            ),
            openai_api_key=self.openai_api_key,
            openai_base_url=self.openai_base_url,
            ollama_host=self.ollama_host,
            ollama_num_ctx=self.ollama_num_ctx,
            max_steps=max(1, self.agent_max_steps),
            context_tokens=max(1_000, self.agent_context_tokens),
            approval_policy=self.approval_policy,
            images=self.agent_images,
            image_budget=ImageBudget(
                max(0, self.agent_images_per_step), max(0, self.agent_image_bytes)
            ),
            masker=masker,
            request_timeout=self.agent_request_timeout,
            stream_interval=stream_interval,
            data_dir=str(Path(data_dir) / "agent"),
            environ=dict(os.environ),
        )
