"""The OpenAPI document: FastAPI's own, plus the API key's schemes and the ``/mcp`` endpoint.

FastAPI generates every route's operation (401 and 403 come from ``app.api.deps``). This adds
what it cannot see: how the key is presented (an operation documenting 401 requires it), and
``/mcp``, a plain Starlette route whose bodies the Model Context Protocol defines. FastAPI's
generation and caching (``app.openapi_schema``) are left as they are.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.routing import Route

from app.api.mcp.server import RcaMcpServer
from app.api.mcp.transports import MCP_PATH

SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "ApiKeyHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "An API key from RCA_API_KEYS",
    },
    "BearerKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "The same API key as `Authorization: Bearer <key>`",
    },
}

#: Either scheme will do.
KEY_REQUIRED: list[dict[str, list[str]]] = [{name: []} for name in SECURITY_SCHEMES]

ENVELOPE = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}}
JSON_RPC_ERROR = {
    "application/json": {
        "schema": {
            "type": "object",
            "description": "A JSON-RPC 2.0 error: "
            '`{"jsonrpc": "2.0", "id": null, "error": {"code", "message"}}`',
        }
    }
}
PLAIN_TEXT = {"text/plain": {"schema": {"type": "string"}}}

MCP_REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "description": "A JSON-RPC 2.0 message (or batch) as the MCP specification "
                "defines it: initialize, tools/list, tools/call, resources/read, …",
                "required": ["jsonrpc"],
                "properties": {
                    "jsonrpc": {"type": "string", "enum": ["2.0"]},
                    "id": {"type": ["integer", "string"]},
                    "method": {"type": "string"},
                    "params": {"type": "object"},
                },
            },
            "examples": {
                "tools/list": {
                    "value": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
                }
            },
        }
    },
}


def rebinding_refusal(header: str) -> dict[str, Any]:
    """The SDK's answer when its DNS-rebinding protection refuses a ``header``."""
    return {
        "description": f"{header} refused by DNS-rebinding protection (plain text; only with "
        "RCA_AUTH=off, loopback only)",
        "content": PLAIN_TEXT,
    }


MCP_RESPONSES: dict[str, dict[str, Any]] = {
    "200": {
        "description": "The JSON-RPC response (the server answers in JSON, never an event stream)",
        "content": {"application/json": {"schema": {"type": "object"}}},
    },
    "202": {"description": "A notification or response was accepted; no body"},
    "400": {
        "description": "Not JSON or not a JSON-RPC message (a JSON-RPC error); a Content-Type "
        "other than application/json (plain text)",
        "content": {**JSON_RPC_ERROR, **PLAIN_TEXT},
    },
    "401": {"description": "Missing or invalid API key", "content": ENVELOPE},
    "403": rebinding_refusal("Origin"),
    "405": {"description": "Method not allowed (see Allow)", "content": ENVELOPE},
    "406": {"description": "Accept does not admit application/json", "content": JSON_RPC_ERROR},
    "413": {"description": "Request body over RCA_MAX_BODY_BYTES", "content": ENVELOPE},
    "421": rebinding_refusal("Host"),
    "429": {"description": "Rate limit exceeded (see Retry-After)", "content": ENVELOPE},
    "500": {"description": "The MCP server failed (a JSON-RPC error)", "content": JSON_RPC_ERROR},
}


def mcp_path_item(app: FastAPI) -> dict[str, Any]:
    """The operations of ``/mcp``: the methods its route serves, each described the same way."""
    server: RcaMcpServer = app.state.mcp
    # The tool manager is the SDK's synchronous view of the tools (list_tools is async).
    tools = ", ".join(f"`{tool.name}`" for tool in server._tool_manager.list_tools())
    operation = {
        "tags": ["mcp"],
        "summary": "Model Context Protocol (streamable HTTP, stateless)",
        "description": "MCP for other agents: the bodies are JSON-RPC 2.0 messages as the MCP "
        "specification defines them (https://modelcontextprotocol.io). Send "
        f"`Accept: application/json`. Tools: {tools}. The API key is checked before the MCP "
        "server sees the request; apart from 401, 405, 413 and 429 (our error envelope) the "
        "errors are the protocol's own.",
        "operationId": "mcp",
        "security": KEY_REQUIRED,
        "requestBody": MCP_REQUEST_BODY,
        "responses": MCP_RESPONSES,
    }
    methods = next(
        route.methods or set()
        for route in app.router.routes
        if isinstance(route, Route) and route.path == MCP_PATH
    )
    return {method.lower(): operation for method in sorted(methods - {"HEAD"})}


def contract(app: FastAPI) -> dict[str, Any]:
    """The application's OpenAPI document: FastAPI's (cached by FastAPI), completed once."""
    schema = FastAPI.openapi(app)
    # FastAPI hands back its cached document until the routes change; a fresh one lacks /mcp.
    if MCP_PATH not in schema["paths"]:
        schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
        for item in schema["paths"].values():
            for operation in item.values():
                if "401" in operation.get("responses", {}):
                    operation["security"] = KEY_REQUIRED
        schema["paths"][MCP_PATH] = mcp_path_item(app)
    return schema


def install_contract(app: FastAPI) -> None:
    """Serve ``contract(app)`` as the app's OpenAPI document (``/openapi.json`` with debug)."""
    app.openapi = lambda: contract(app)  # type: ignore[method-assign]
