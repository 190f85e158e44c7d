"""Set-up of the MCP endpoint's tests (``jupyter_loop/mcp_server``): the SDK client session
(``loop_mcp_session``, from ``loop_fixtures.py``) sends the test's token, and the server names
that token's user ``ada`` rather than a fresh "Anonymous ..." per cookie jar, so approvals,
journals and sessions have one owner a test can check. A module with users of its own
(``test_mcp_users.py``) overrides ``jp_server_config``.
"""

from __future__ import annotations

import pytest
from mcp_helpers import NamedUserIdentity
from traitlets.config import Config


@pytest.fixture
def jp_server_config(jp_server_config: Config) -> Config:
    jp_server_config.ServerApp.identity_provider_class = NamedUserIdentity
    return jp_server_config
