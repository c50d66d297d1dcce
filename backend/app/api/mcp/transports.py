"""The MCP server's two transports: streamable HTTP at ``/mcp`` in the app, and stdio.

Over HTTP the endpoint is a plain route at exactly ``/mcp`` (no redirect to ``/mcp/``) behind
the app's middleware, and the API key is checked before the MCP session manager sees the
request: without a valid key the answer is the app's 401 envelope. The session manager is
stateless (any worker can answer any request), takes POSTs only and answers in JSON; its
lifecycle runs inside the application's lifespan (``mcp_lifespan``). Over stdio (``rca mcp``)
the server opens the runtime itself once the transport has diverted stray output from stdout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.api.deps import get_identity
from app.api.mcp.server import RcaMcpServer, build_mcp_server
from app.core.config import Settings
from app.runtime import Runtime, open_runtime

MCP_PATH = "/mcp"


class McpEndpoint:
    """The ASGI app at ``/mcp``: authenticate, then hand the request to the session manager."""

    def __init__(self, server: RcaMcpServer) -> None:
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Raise the app's 401 without a valid key; otherwise serve MCP with the identity set."""
        # get_identity records the identity on request.state, which the tools read back.
        get_identity(Request(scope, receive))
        await self.server.session_manager.handle_request(scope, receive, send)


def mount_mcp(app: FastAPI, settings: Settings) -> RcaMcpServer:
    """Serve MCP at ``/mcp`` of ``app``; the tools use the runtime the lifespan builds.

    Args:
        app: The application (its ``state.keyring`` already set).
        settings: Its settings.

    Returns:
        The server (also ``app.state.mcp``).
    """
    server = build_mcp_server(lambda: getattr(app.state, "runtime", None))
    # With auth on, API keys guard the endpoint as they guard the rest of the API, so Host
    # checks would only break proxies; with auth off (loopback only) the SDK's DNS-rebinding
    # protection stops web pages from reaching the unauthenticated endpoint.
    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=False)
        if app.state.keyring is not None
        else None
    )
    server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=settings.host,
    )
    # POST only: a stateless server has no session to DELETE and no stream to GET (the
    # protocol's answer to both is 405), and an idle GET stream would hold a connection open.
    app.router.routes.append(Route(MCP_PATH, endpoint=McpEndpoint(server), methods=["POST"]))
    app.state.mcp = server
    return server


def mcp_lifespan(app: FastAPI) -> AbstractAsyncContextManager[None]:
    """The MCP session manager's lifecycle, entered inside the application's lifespan."""
    server: RcaMcpServer = app.state.mcp
    return server.session_manager.run()


async def serve_stdio(settings: Settings) -> None:
    """Serve MCP over stdin/stdout until the client closes stdin (``rca mcp``).

    Args:
        settings: The service settings; the runtime (knowledge base, state, graph) is opened
            from them when the transport starts.
    """
    holder: dict[str, Runtime] = {}

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        async with open_runtime(settings) as runtime:
            holder["runtime"] = runtime
            try:
                yield
            finally:
                holder.clear()

    server = build_mcp_server(lambda: holder.get("runtime"), lifespan=lifespan)
    await server.run_stdio_async()
