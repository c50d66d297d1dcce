"""``rca mcp`` over stdio, driven by the MCP SDK's own client in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from tests.api.helpers import CHECKOUT_INCIDENT, TOOLS, error_text, structured
from tests.helpers import unique_name

from app.core.config import PROJECT_ROOT


@asynccontextmanager
async def rca_mcp(tmp_path: Path) -> AsyncIterator[Client]:
    """A connected client of ``rca mcp`` with a private state dir and collection."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp"],
        env={
            "PYTHONPATH": str(PROJECT_ROOT / "backend"),
            "RCA_STATE_DIR": str(tmp_path / "state"),
            "RCA_COLLECTION_NAME": unique_name("kb"),
            "RCA_LOG_FORMAT": "json",
        },
        cwd=tmp_path,
    )
    async with Client(params, read_timeout_seconds=300) as client:
        yield client


async def test_stdio_lists_the_tools_searches_and_serves_docs(tmp_path: Path) -> None:
    async with rca_mcp(tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        assert set(tools["search_knowledge"].input_schema["properties"]) == {"query", "limit"}

        found = structured(
            await client.call_tool(
                "search_knowledge", {"query": "ZeroDivisionError in checkout discount", "limit": 3}
            )
        )
        assert found["low_confidence"] is False and 1 <= len(found["hits"]) <= 3
        top = found["hits"][0]
        assert top["error_code"] == "CO-500" and top["id"].startswith("error-doc-")
        assert top["text"].startswith("Error: CO-500")
        assert top["why"]["dense_rank"] is not None and "fused_score" in top["why"]

        blank = await client.call_tool("search_knowledge", {"query": "   "})
        assert blank.is_error

        resources = (await client.list_resources()).resources
        docs = {str(r.uri): r for r in resources if str(r.uri).startswith("knowledge://docs/")}
        assert len(docs) == 10
        uri = f"knowledge://docs/{top['id']}"
        assert docs[uri].name == "CO-500 CHECKOUT_SERVICE_CRASH"
        read = await client.read_resource(uri)
        assert getattr(read.contents[0], "text", "") == top["text"]
        with pytest.raises(MCPError, match="no knowledge doc"):
            await client.read_resource("knowledge://docs/error-doc-missing")


async def test_stdio_analyzes_an_incident_for_a_human_to_review(tmp_path: Path) -> None:
    async with rca_mcp(tmp_path) as client:
        analysis = structured(
            await client.call_tool("analyze_incident", {"incident": CHECKOUT_INCIDENT})
        )
        assert analysis["status"] == "awaiting_review"
        assert analysis["review_url"].endswith(f"#/incidents/{analysis['id']}")
        assert analysis["draft"]["hypotheses"][0]["error_code"] == "CO-500"

        incident = structured(
            await client.call_tool("get_incident", {"incident_id": analysis["id"]})
        )
        assert incident["id"] == analysis["id"] and incident["rca"] == analysis["draft"]
        pending = structured(await client.call_tool("list_pending_reviews", {}))
        assert [i["id"] for i in pending["items"]] == [analysis["id"]]

        missing = await client.call_tool("get_incident", {"incident_id": "no-such-incident"})
        assert "no incident with id 'no-such-incident'" in error_text(missing)
        invalid = await client.call_tool("analyze_incident", {"incident": {"message": ""}})
        assert invalid.is_error


def test_a_configuration_error_is_reported_like_any_command(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": str(PROJECT_ROOT / "backend"),
        "RCA_STATE_DIR": str(tmp_path / "state"),
        "RCA_KNOWLEDGE_PATH": str(tmp_path / "missing.txt"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "mcp"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert "error: knowledge source 'missing.txt' does not exist" in done.stderr
    assert done.stdout == ""
