"""The agent's settings (from ``c.JupyterLoopApp.*`` and the environment) and its provider.

Keys stay here: :meth:`AgentSettings.public` is what the browser may see (names, never
values), and ``repr`` hides them too.

Example:
    >>> settings = AgentSettings(provider=None, environ={})
    >>> settings.provider_kind() is None
    True
    >>> "OPENAI_API_KEY" in settings.unconfigured_hint()
    True
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..notebook_view.vision import ImageBudget
from ..providers import PROVIDER_KINDS, ModelProvider, make_provider
from ..providers.allowed_models import ModelAllowList
from ..providers.token_budgets import BudgetLimits
from ..secrets import SecretMasker
from .context import DEFAULT_BUDGET_TOKENS

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class AgentSettings:
    """What the agent service needs to know, gathered once at start-up.

    Attributes:
        provider: ``"openai"``, ``"ollama"`` or None (chosen from what is configured).
        model: The default model; None: see :meth:`default_model`.
        allowed_models: The models turns and completions may use (the administrator's).
        budget_limits: Tokens a day per user and per notebook (the administrator's caps).
        openai_api_key / openai_base_url: None reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
        ollama_host: None reads ``OLLAMA_HOST``.
        ollama_num_ctx: Ollama's context window to ask for (None: Ollama's default).
        max_steps: Model calls per turn at most.
        context_tokens: The prompt budget per step.
        approval_policy: ``ask``, ``turn``, ``always`` or ``never``.
        images: ``auto``, ``on`` or ``off``: image outputs for models that take them.
        image_budget: Images per model call at most (count and bytes).
        masker: Masks secrets in prompts, the conversation, the journal and logs (None: off).
        request_timeout: Seconds to wait for the model server.
        stream_interval: Seconds over which streamed text is gathered into one write.
        data_dir: Where conversations and journals are kept.
        environ: The environment (the process's by default).
    """

    provider: str | None = None
    model: str | None = None
    allowed_models: ModelAllowList = ModelAllowList()
    budget_limits: BudgetLimits = BudgetLimits()
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    ollama_host: str | None = None
    ollama_num_ctx: int | None = None
    max_steps: int = 25
    context_tokens: int = DEFAULT_BUDGET_TOKENS
    approval_policy: str = "ask"
    images: str = "auto"
    image_budget: ImageBudget = ImageBudget()
    masker: SecretMasker | None = field(default=None, repr=False)
    request_timeout: float = 120.0
    stream_interval: float = 0.05
    data_dir: str = ""
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ), repr=False)

    def provider_kind(self) -> str | None:
        """The provider to use, or None when nothing is configured."""
        if self.provider:
            return self.provider
        for kind in PROVIDER_KINDS:
            if self.kind_configured(kind):
                return kind
        return None

    def kind_configured(self, kind: str) -> bool:
        """Whether this provider kind can be used (chosen, or its key / URL / host is set)."""
        if kind == self.provider:
            return True
        env = self.environ
        if kind == "openai":
            return bool(
                self.openai_api_key
                or self.openai_base_url
                or env.get("OPENAI_API_KEY")
                or env.get("OPENAI_BASE_URL")
            )
        if kind == "ollama":
            return bool(self.ollama_host or env.get("OLLAMA_HOST"))
        return False

    def default_model(self, kind: str | None = None) -> str | None:
        """The configured model; for OpenAI's own API, a small default; else None.

        None means "the first model the server lists" (Ollama, compatible servers). The
        configured model belongs to the default provider; another kind has none.
        """
        default_kind = self.provider_kind()
        kind = kind or default_kind
        if self.model and kind == default_kind:
            return self.model
        if kind == "openai" and not self._openai_url():
            return DEFAULT_OPENAI_MODEL
        return None

    def _openai_url(self) -> str | None:
        return self.openai_base_url or self.environ.get("OPENAI_BASE_URL") or None

    @staticmethod
    def unconfigured_hint() -> str:
        # One paragraph, no line breaks: it is also a REST error message and the CLI's.
        return (
            "No model provider is configured. Set OPENAI_API_KEY (or "
            "c.JupyterLoopApp.openai_api_key) for OpenAI; OPENAI_BASE_URL (or "
            "c.JupyterLoopApp.openai_base_url) for an OpenAI-compatible server (a local one, "
            "such as llama.cpp, vLLM or LM Studio, needs no key); or OLLAMA_HOST "
            "(or c.JupyterLoopApp.ollama_host) for Ollama. c.JupyterLoopApp.agent_provider "
            "chooses between them; c.JupyterLoopApp.agent_model sets the model. The "
            "c.JupyterLoopApp settings go in jupyter_server_config.py in the directory that "
            "`jupyter --config-dir` prints (or on the command line: "
            "--JupyterLoopApp.openai_base_url=…). Inline completions in cells use the same "
            "provider and stay off until one is set."
        )

    def make_provider(self, kind: str | None = None) -> ModelProvider | None:
        """The provider of that kind (default: the configured one), or None if unusable."""
        kind = kind or self.provider_kind()
        if kind is None or not self.kind_configured(kind):
            return None
        options: dict[str, Any] = {"timeout": self.request_timeout}
        if kind == "openai":
            options["api_key"] = self.openai_api_key or self.environ.get("OPENAI_API_KEY")
            options["base_url"] = self._openai_url()
            options["images"] = self.images
        else:
            options["host"] = self.ollama_host or self.environ.get("OLLAMA_HOST")
            options["num_ctx"] = self.ollama_num_ctx
        return make_provider(kind, **options)

    def make_masker(self) -> SecretMasker | None:
        """The masker for everything sent to a model, journalled or logged (None: off)."""
        return self.masker
