"""MCP over streamable HTTP at ``/mcp`` of a real uvicorn process, behind the API keys."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.api.helpers import CHECKOUT_INCIDENT, TOOLS, structured
from tests.helpers import ServiceProcess, unique_name

SUBMITTER_KEY = "submitter-key-for-the-mcp-tests"
REVIEWER_KEY = "reviewer-key-for-the-mcp-tests"
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    state = tmp_path_factory.mktemp("mcp-http")
    env = {
        "RCA_STATE_DIR": str(state),
        "RCA_COLLECTION_NAME": unique_name("kb"),
        "RCA_API_KEYS": f"submitter:{SUBMITTER_KEY}:agent,reviewer:{REVIEWER_KEY}:ana",
    }
    server = ServiceProcess(env).start()
    try:
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def mcp_client(service: ServiceProcess, key: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=120) as http:
        transport = streamable_http_client(f"{service.base_url}/mcp", http_client=http)
        async with Client(transport, read_timeout_seconds=120) as client:
            yield client


@pytest.mark.parametrize(
    "headers", [{}, {"X-API-Key": "not-a-configured-key-at-all"}, {"Authorization": "Basic x"}]
)
def test_mcp_without_a_valid_key_is_401_in_the_error_envelope(
    service: ServiceProcess, headers: dict[str, str]
) -> None:
    response = httpx.post(
        f"{service.base_url}/mcp",
        json=LIST_TOOLS,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "unauthorized", "message": "missing or invalid API key"}
    }


def test_mcp_is_served_at_exactly_slash_mcp_without_a_redirect(service: ServiceProcess) -> None:
    response = httpx.post(
        f"{service.base_url}/mcp",
        json=LIST_TOOLS,
        headers={"Accept": "application/json, text/event-stream", "X-API-Key": SUBMITTER_KEY},
        timeout=30,
    )
    assert response.status_code == 200 and "location" not in response.headers
    assert {t["name"] for t in response.json()["result"]["tools"]} == TOOLS
    # Stateless: no server-sent stream to open and no session to end.
    for method in ("GET", "DELETE"):
        refused = httpx.request(
            method, f"{service.base_url}/mcp", headers={"X-API-Key": SUBMITTER_KEY}, timeout=30
        )
        assert refused.status_code == 405


async def test_a_submitter_key_lists_tools_searches_and_analyzes(service: ServiceProcess) -> None:
    async with mcp_client(service, SUBMITTER_KEY) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        found = structured(
            await client.call_tool("search_knowledge", {"query": "PAY-408 payment timeout"})
        )
        assert found["hits"][0]["error_code"] == "PAY-408"

        analysis = structured(
            await client.call_tool("analyze_incident", {"incident": CHECKOUT_INCIDENT})
        )
        assert analysis["status"] == "awaiting_review"
        pending = structured(await client.call_tool("list_pending_reviews", {"limit": 200}))
        assert analysis["id"] in [i["id"] for i in pending["items"]]

    # The incident is an ordinary one: the REST API shows the same draft to a reviewer.
    rest = httpx.get(
        f"{service.base_url}/api/incidents/{analysis['id']}",
        headers={"X-API-Key": REVIEWER_KEY},
        timeout=30,
    ).json()
    assert rest["status"] == "awaiting_review" and rest["rca"] == analysis["draft"]


async def test_a_reviewer_key_reads_incidents_and_docs(service: ServiceProcess) -> None:
    async with mcp_client(service, REVIEWER_KEY) as client:
        pending = structured(await client.call_tool("list_pending_reviews", {}))
        assert pending["total"] == len(pending["items"])
        resources = (await client.list_resources()).resources
        assert sum(str(r.uri).startswith("knowledge://docs/") for r in resources) == 10


def test_without_auth_a_foreign_host_header_is_refused(tmp_path: Path) -> None:
    # Auth off is loopback only; the SDK's DNS-rebinding guard keeps web pages that resolve
    # their own name to 127.0.0.1 away from the unauthenticated endpoint.
    env = {
        "RCA_STATE_DIR": str(tmp_path / "state"),
        "RCA_COLLECTION_NAME": unique_name("kb"),
        "RCA_AUTH": "off",
    }
    server = ServiceProcess(env).start()
    try:
        headers = {"Accept": "application/json, text/event-stream"}
        local = httpx.post(f"{server.base_url}/mcp", json=LIST_TOOLS, headers=headers, timeout=30)
        assert local.status_code == 200
        foreign = httpx.post(
            f"{server.base_url}/mcp",
            json=LIST_TOOLS,
            headers={**headers, "Host": "rebind.example"},
            timeout=30,
        )
        assert foreign.status_code in (400, 403, 421)
        assert "result" not in foreign.text
    finally:
        server.stop()
