"""The agent's model providers: made on first use from the settings, one per kind, and
which model a turn uses (the administrator's allow-list decides).

The agent service asks here for a turn's provider and model; ``GET models`` is answered
here. A provider holds an HTTP client, so they are kept, not made per turn, and closed
when the server stops.
"""

from __future__ import annotations

from typing import Any

from ..errors import BadRequest, Unavailable
from ..providers import ModelProvider, ProviderError
from .payloads import TurnRequest
from .settings import AgentSettings


class ModelProviders:
    """The providers of the agent's turns, one per kind, made on first use."""

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self._providers: dict[str, ModelProvider] = {}

    def start(self) -> None:
        """Make the configured provider now (its mistakes show at start, not at a turn)."""
        kind = self.settings.provider_kind()
        if kind is not None:
            self.of(kind)

    def of(self, kind: str | None) -> ModelProvider | None:
        """The provider of that kind (default: the configured one), made on first use."""
        kind = kind or self.settings.provider_kind()
        if kind is None:
            return None
        if kind not in self._providers:
            provider = self.settings.make_provider(kind)
            if provider is None:
                return None
            self._providers[kind] = provider
        return self._providers[kind]

    def require(self, kind: str | None) -> ModelProvider:
        """The provider of that kind; 400 if another kind is configured, else 503."""
        provider = self.of(kind)
        if provider is None:
            hint = self.settings.unconfigured_hint()
            if kind is not None and self.settings.provider_kind() is not None:
                raise BadRequest(f"The provider '{kind}' is not configured. {hint}")
            raise Unavailable(hint)
        return provider

    async def model_for(self, request: TurnRequest, provider: ModelProvider) -> str:
        """The model a turn uses: the one it asks for, else the default, if allowed."""
        default = self.settings.default_model(request.provider)
        return await self.settings.allowed_models.choose(provider, request.model, default)

    async def models(self, kind: str | None = None) -> dict[str, Any]:
        """The provider, whether it is usable, and its models (never a key)."""
        kind = kind or self.settings.provider_kind()
        provider = self.of(kind)
        allowed = self.settings.allowed_models
        default = self.settings.default_model(kind) if provider else None
        reply: dict[str, Any] = {
            "provider": kind,
            "configured": provider is not None,
            "default_model": default if default and allowed.allows(default) else None,
            "models": [],
            "hint": None,
        }
        if provider is None:
            reply["hint"] = self.settings.unconfigured_hint()
            return reply
        try:
            reply["models"] = allowed.only(info.id for info in await provider.models())
        except ProviderError as e:
            reply["hint"] = e.message
        if reply["default_model"] is None and reply["models"]:
            reply["default_model"] = reply["models"][0]
        return reply

    async def close(self) -> None:
        """Close every provider made (their HTTP clients)."""
        providers = list(self._providers.values())
        self._providers.clear()
        for provider in providers:
            await provider.aclose()
