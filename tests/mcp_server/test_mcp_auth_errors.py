"""Refusals as MCP clients read them (issue 43, §3): a missing or wrong token answers 401
with a ``WWW-Authenticate: Bearer resource_metadata=…`` challenge, every refusal's body is a
JSON-RPC error (so an SDK client shows the server's reason, not "Server returned an error
response"), and the endpoint's OAuth Protected Resource Metadata (RFC 9728) is published
under the server's base URL. Driven by raw HTTP and by the MCP SDK's own client."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest
from authorizers import both
from mcp.shared.exceptions import MCPError

ACCEPT = {"Accept": "application/json, text/event-stream"}
LISTING = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CHALLENGE = re.compile(r'Bearer resource_metadata="([^"]+)"')


def refusal_of(error: BaseException) -> MCPError:
    """The SDK's error in what the client raised (its task groups wrap it in groups)."""
    while getattr(error, "exceptions", None):  # an exception group (Python 3.11+)
        error = error.exceptions[0]  # type: ignore[attr-defined]
    assert isinstance(error, MCPError), repr(error)
    return error


def jsonrpc_error(response: Any) -> dict[str, Any]:
    """The JSON-RPC error of a refusal's body (its content type says JSON)."""
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    error: dict[str, Any] = body["error"]
    assert isinstance(error["code"], int) and error["message"], body
    return error


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
@pytest.mark.parametrize("sent", ["no token", "a wrong Jupyter token", "a made-up scoped token"])
async def test_a_missing_or_wrong_token_answers_401_with_a_bearer_challenge(
    method: str, sent: str, loop_mcp_url: str
) -> None:
    headers = {
        "no token": {},
        "a wrong Jupyter token": {"Authorization": "token not-the-servers"},
        "a made-up scoped token": {"Authorization": "Bearer jlt_made_up_secret"},
    }[sent]
    async with httpx2.AsyncClient(headers={**ACCEPT, **headers}) as http:
        body = LISTING if method == "POST" else None
        response = await http.request(method, loop_mcp_url, json=body)
    assert response.status_code == 401, (response.status_code, response.text)
    assert CHALLENGE.fullmatch(response.headers["www-authenticate"]), response.headers
    assert "token" in jsonrpc_error(response)["message"]


async def test_the_protected_resource_metadata_names_the_endpoint_and_the_servers_login(
    loop_mcp_url: str, jp_base_url: str, jp_http_port: int
) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(loop_mcp_url, json=LISTING, headers=ACCEPT)
        found = CHALLENGE.fullmatch(refused.headers["www-authenticate"])
        assert found is not None
        where = found.group(1)
        metadata = (await http.get(where)).json()
        origin = f"http://127.0.0.1:{jp_http_port}"
        # RFC 9728's own place for a resource with a path, taken under the base URL (the
        # host's root is not this server's under a Hub).
        rfc_place = (
            f"{origin}{jp_base_url}.well-known/oauth-protected-resource/api/jupyter-loop/mcp"
        )
        assert where == rfc_place
        bare = await http.get(f"{origin}{jp_base_url}.well-known/oauth-protected-resource")
    assert metadata["resource"] == loop_mcp_url
    assert metadata["authorization_servers"] == [f"{origin}{jp_base_url}login"]
    assert metadata["bearer_methods_supported"] == ["header"]
    assert bare.json() == metadata


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "2026 protocol"])
async def test_an_sdk_client_with_a_wrong_token_shows_the_servers_reason(
    modern: bool, loop_mcp_session: Any
) -> None:
    with pytest.raises(BaseException) as refused:
        async with loop_mcp_session(
            headers={"Authorization": "token not-the-servers"}, modern=modern
        ):
            pass
    assert "A valid Jupyter token is required" in str(refusal_of(refused.value))


@pytest.mark.parametrize("authorizer", both("NoContents"))
async def test_an_sdk_client_refused_by_the_authorizer_shows_why(
    authorizer: str, loop_mcp_session: Any, loop_mcp_url: str, jp_auth_header: Any
) -> None:
    """Authenticated but refused: 403 (no challenge: a token would not help), the reason
    in a JSON-RPC error the SDK shows; under a plain and an ``async def`` authorizer."""
    with pytest.raises(BaseException) as refused:
        async with loop_mcp_session():
            pass
    assert "permission to read contents" in str(refusal_of(refused.value))
    async with httpx2.AsyncClient(headers={**ACCEPT, **jp_auth_header}) as http:
        response = await http.post(loop_mcp_url, json=LISTING)
    assert response.status_code == 403 and "www-authenticate" not in response.headers
    assert "permission to read contents" in jsonrpc_error(response)["message"]


@pytest.mark.parametrize(
    ("sent", "words"),
    [
        ({}, "A valid Jupyter token is required"),
        (
            {"Authorization": "Bearer jlt_made_up_secret"},
            "This jupyter-loop token is unknown, revoked or expired",
        ),
    ],
    ids=["no token", "a made-up scoped token"],
)
async def test_a_refusals_status_line_says_why(
    sent: dict[str, str], words: str, loop_mcp_url: str
) -> None:
    """The status line's reason phrase is the refusal's first words, not "Unauthorized": a
    client that reads only the status (the MCP Python SDK 1.x, and langchain-mcp-adapters
    on it, raise ``Client error '401 …'``) shows the server's reason too."""
    async with httpx2.AsyncClient(headers={**ACCEPT, **sent}) as http:
        response = await http.post(loop_mcp_url, json=LISTING)
    assert response.status_code == 401
    assert response.reason_phrase == words, response.reason_phrase
