"""The FastAPI application: ``create_app()`` and a lifespan that builds everything once.

The lifespan verifies the model, ingests the knowledge base, opens the checkpointer and the
incident index, compiles the graph and finishes any run a crash interrupted. Nothing is built
at import time.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from psycopg import OperationalError as DatabaseUnavailable
from psycopg_pool import PoolTimeout
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from app.api.contract import install_contract
from app.api.deps import UNAUTHORIZED, require
from app.api.mcp.transports import mcp_lifespan, mount_mcp
from app.api.middleware import MemoryRateLimiter, RedisRateLimiter, install_middleware
from app.api.routes import health, incidents, intake, knowledge, retrieve, ui, workspace
from app.core.config import Settings, get_settings
from app.core.errors import AppError, ConfigurationError
from app.core.logging import configure_logging
from app.core.security import KeyRing, Role, is_loopback
from app.runtime import open_runtime
from app.schemas import ErrorResponse

logger = logging.getLogger(__name__)

#: Every route may answer these, always in the one envelope.
ENVELOPE_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": description}
    for status, description in (
        (400, "Unparsable request (bad encoding, nesting too deep)"),
        (404, "Unknown route or resource"),
        (405, "Method not allowed"),
        (413, "Request body over RCA_MAX_BODY_BYTES (declared or chunked)"),
        (422, "Invalid input"),
        (429, "Rate limit exceeded (see Retry-After)"),
        (500, "Internal error (with an error id)"),
        (503, "A dependency (state database, vector store, model) is unavailable"),
    )
}

#: Seconds between rounds of the notification dispatcher (retries, messages left by a crash).
DISPATCH_INTERVAL_SECONDS = 2.0


#: The envelope's ``code`` for the framework's own HTTP errors.
HTTP_ERROR_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    422: "validation_error",
    429: "rate_limited",
    503: "upstream_unavailable",
}


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    """The one error envelope."""
    return {"error": {"code": code, "message": message}}


def describe_validation_error(exc: RequestValidationError) -> str:
    """A short, client-facing description of the first validation problem."""
    errors = exc.errors()
    if not errors:
        return "invalid request"
    first = errors[0]
    location = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
    where = ".".join(location)
    message = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"


#: The methods a 405's ``Allow`` may name.
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves on the request's path (for a 405's ``Allow``)."""
    # Included routers are opaque wrappers here: only asking each route whether it would take
    # the request with another method sees through them.
    return [
        method
        for method in HTTP_METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL
            for route in request.app.router.routes
        )
    ]


class EnvelopeCORSMiddleware(CORSMiddleware):
    """CORS whose refused preflight answers in the error envelope, like every other refusal."""

    def preflight_response(self, request_headers: Headers) -> Response:
        """Starlette's preflight answer; a refusal (400, plain text) becomes the envelope."""
        response = super().preflight_response(request_headers)
        if response.status_code != 400:
            return response
        headers = {
            name: value
            for name, value in response.headers.items()
            if name not in ("content-type", "content-length")
        }
        message = bytes(response.body).decode()
        return JSONResponse(error_body("bad_request", message), status_code=400, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """AppError → its status; validation → 422; anything else → opaque 500 with an error id."""

    @app.exception_handler(AppError)
    async def on_app_error(request: Request, exc: AppError) -> JSONResponse:
        return JSONResponse(error_body(exc.code, exc.message), status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            error_body("validation_error", describe_validation_error(exc)), status_code=422
        )

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # The framework's own refusals (unknown route, method, unparsable body) in the envelope.
        code = HTTP_ERROR_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            # Starlette names only the first route on the path; Allow must list them all.
            headers["Allow"] = ", ".join(allowed_methods(request))
        return JSONResponse(
            error_body(code, str(exc.detail)), status_code=exc.status_code, headers=headers
        )

    @app.exception_handler(DatabaseUnavailable)
    @app.exception_handler(PoolTimeout)
    async def on_database_down(request: Request, exc: Exception) -> JSONResponse:
        logger.warning(
            "state database unavailable on %s %s: %s", request.method, request.url.path, exc
        )
        return JSONResponse(
            error_body("upstream_unavailable", "the state database is unavailable; retry later"),
            status_code=503,
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        error_id = uuid.uuid4().hex[:12]
        logger.exception("unhandled error %s on %s %s", error_id, request.method, request.url.path)
        return JSONResponse(
            error_body("internal_error", f"internal error (id {error_id})"), status_code=500
        )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the store, model, checkpointer and graph once per process."""
    async with open_runtime(app.state.settings) as runtime, mcp_lifespan(app):
        app.state.runtime = runtime
        app.state.embedder = runtime.embedder
        app.state.knowledge = runtime.knowledge
        app.state.incidents = runtime.incidents
        app.state.retrieval = runtime.retriever
        app.state.fingerprints = runtime.backend.fingerprints
        notifier = runtime.notifier
        loops = (
            [
                asyncio.create_task(notifier.run_dispatcher(DISPATCH_INTERVAL_SECONDS)),
                asyncio.create_task(notifier.run_reminders(runtime.incidents, 60)),
            ]
            if notifier
            else []
        )
        interval = app.state.settings.recovery_interval_seconds
        if interval > 0:
            # Runs a crashed worker left behind are taken over once their lease is free.
            loops.append(asyncio.create_task(runtime.incidents.recover_periodically(interval)))
        try:
            yield
        finally:
            for loop in loops:
                loop.cancel()
                with suppress(asyncio.CancelledError):
                    await loop


def keyring_from_settings(settings: Settings) -> KeyRing | None:
    """The configured keys; None when auth is off. Fails closed on a missing configuration."""
    if settings.auth == "off":
        if not is_loopback(settings.host):
            raise ConfigurationError(
                "RCA_AUTH=off is accepted only when bound to a loopback address "
                f"(RCA_HOST is {settings.host})"
            )
        return None
    spec = settings.api_keys.get_secret_value() if settings.api_keys else ""
    keyring = KeyRing.parse(spec)
    if not len(keyring):
        raise ConfigurationError(
            "no API keys configured: set RCA_API_KEYS to 'role:key[:name],…' "
            "(roles: submitter, reviewer, admin), or RCA_AUTH=off on a loopback address"
        )
    return keyring


def create_app(settings: Settings | None = None) -> FastAPI:
    """The application; pass ``settings`` in tests, otherwise they come from the environment."""
    settings = settings or get_settings()
    keyring = keyring_from_settings(settings)
    app = FastAPI(
        title="Incident RCA agent",
        version="0.1.0",
        lifespan=lifespan,
        docs_url="/docs" if settings.debug else None,
        redoc_url=None,
        openapi_url="/openapi.json" if settings.debug else None,
        responses=ENVELOPE_RESPONSES,
    )
    app.state.settings = settings
    app.state.keyring = keyring
    configure_logging(settings.log_level, settings.log_format)
    limiter = RedisRateLimiter(settings.redis_url) if settings.redis_url else MemoryRateLimiter()
    app.state.rate_limiter = limiter
    install_middleware(app, limiter, settings.rate_limit_per_minute, settings.max_body_bytes)
    if settings.cors_origins.strip():
        app.add_middleware(
            EnvelopeCORSMiddleware,
            allow_origins=[o.strip() for o in settings.cors_origins.split(",") if o.strip()],
            allow_methods=["GET", "POST"],
            allow_headers=["Content-Type", "X-API-Key", "Authorization", "X-Request-ID"],
        )
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(incidents.router)
    app.include_router(workspace.router)
    app.include_router(intake.router)
    app.include_router(knowledge.router)
    # The UI is public: the page holds no data and asks for an API key when needed.
    app.include_router(ui.router)
    app.include_router(
        retrieve.router, dependencies=[Depends(require(Role.SUBMITTER))], responses=UNAUTHORIZED
    )
    # Model Context Protocol for other agents, behind the same keys (see app.api.mcp).
    mount_mcp(app, settings)
    install_contract(app)
    return app
