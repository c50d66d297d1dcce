"""Helpers for the MCP tests: the server's expected surface and result unpacking."""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult

TOOLS = {"search_knowledge", "analyze_incident", "get_incident", "list_pending_reviews"}
CHECKOUT_INCIDENT = {
    "message": "ZeroDivisionError while calculating checkout discount",
    "service": "checkout-service",
    "logs": ["2026-11-29T10:00:01Z ERROR checkout POST /checkout 500"],
}


def structured(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool call."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


def error_text(result: CallToolResult) -> str:
    """The message of a failed tool call."""
    assert result.is_error
    return " ".join(getattr(item, "text", "") for item in result.content)
