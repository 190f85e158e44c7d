"""Which secrets are masked, mixed into ``JupyterLoopApp`` (``c.JupyterLoopApp.*``).

One masker serves both places secrets could leak through: cell outputs on their way into
the notebook, and everything the agent sends to a model, keeps or logs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from traitlets import Bool, List, Unicode
from traitlets.config import Configurable

from .secrets import DEFAULT_ENV_NAME_PATTERNS, SecretMasker


class MaskingConfig(Configurable):
    """Secret values, sensitive environment names and the on/off switch."""

    secrets = List(
        Unicode(),
        default_value=[],
        config=True,
        help=(
            "Extra secret values to mask in outputs and everything the agent sends or keeps "
            "(default none). Configured keys, environment variables with sensitive names and "
            "well-known token shapes are masked anyway."
        ),
    )
    mask_secrets = Bool(
        True,
        config=True,
        help=(
            "Mask secrets (default True) in cell outputs, and in what the agent sends to a "
            "model, its conversation, journal and logs. False turns masking off."
        ),
    )
    secret_env_patterns = List(
        Unicode(),
        default_value=list(DEFAULT_ENV_NAME_PATTERNS),
        config=True,
        help=(
            "Names (fnmatch patterns, any case) of the environment variables whose values are "
            "masked, the server's and those acp_agents gives its agents (default: *API_KEY, "
            "*_KEY, *TOKEN, *SECRET, *PASSWORD*, ...). "
            "An empty list masks configured secrets and token shapes only."
        ),
    )

    def masking_spec(self, *also: str | None) -> dict[str, object]:
        """These settings as JSON, for a kernel's keeper (``keeper.journal.masker_from``)."""
        return {
            "enabled": bool(self.mask_secrets),
            "secrets": [value for value in (*self.secrets, *also) if value],
            "env_patterns": list(self.secret_env_patterns),
        }

    def secret_masker(
        self, *also: str | None, environs: Iterable[Mapping[str, str]] = ()
    ) -> SecretMasker | None:
        """The masker for these settings (plus ``also``, e.g. a configured API key, and the
        variables of ``environs`` besides the server's, e.g. what agents are given)."""
        if not self.mask_secrets:
            return None
        values = [value for value in (*self.secrets, *also) if value]
        variables = [pair for environ in (os.environ, *environs) for pair in environ.items()]
        return SecretMasker(
            values,
            environ=variables,
            env_name_patterns=tuple(self.secret_env_patterns),
        )
