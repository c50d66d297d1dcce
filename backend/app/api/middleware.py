"""HTTP middleware: request ids, latency metrics, security headers, body cap, rate limits.

Order (outermost first): request id, latency metric, security headers and rate limit in one
layer (``RequestPipeline``), then the body size cap.
Every rejection uses the one error envelope ``{"error": {"code", "message"}}``.

Rate limits count per valid API key; a request with no key or a key that is not valid counts
against its client address, so failed authentication is limited too, however many bogus keys
an attacker presents, and the limiter holds one bucket per valid key or address. The in-process
limiter is also capped at ``MemoryRateLimiter.max_buckets`` buckets.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from typing import Any, Protocol

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import presented_key
from app.core.logging import request_id_var
from app.core.metrics import REQUEST_LATENCY
from app.core.security import KeyRing

_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
RATE_LIMIT_EXEMPT = ("/health", "/ready", "/", "/static")
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def error_response(status: int, code: str, message: str, **headers: str) -> JSONResponse:
    """The error envelope as a response."""
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


class RateLimiter(Protocol):
    """Counts requests per client in fixed one-minute windows."""

    async def hit(self, client: str, limit: int) -> int | None:
        """Record a request; None when allowed, else seconds until the window resets."""
        ...


class MemoryRateLimiter:
    """In-process fixed windows (one worker), at most ``max_buckets`` buckets at a time."""

    def __init__(self, max_buckets: int = 10_000) -> None:
        self.max_buckets = max_buckets
        self._counts: dict[tuple[str, int], int] = {}

    def __len__(self) -> int:
        return len(self._counts)

    async def hit(self, client: str, limit: int) -> int | None:
        """Record a request; None when allowed, else seconds until the window resets."""
        now = time.time()
        window = int(now // 60)
        if (client, window) not in self._counts and len(self._counts) >= self.max_buckets:
            self._counts = {k: v for k, v in self._counts.items() if k[1] == window}
            # Still full within one window: forget the oldest buckets (they start over).
            for stale in list(self._counts)[: max(1, len(self._counts) - self.max_buckets + 1)]:
                del self._counts[stale]
        count = self._counts.get((client, window), 0) + 1
        self._counts[(client, window)] = count
        return None if count <= limit else max(1, int(60 - now % 60))


class RedisRateLimiter:
    """Fixed windows in Redis, shared by every worker of a deployment."""

    def __init__(self, url: str) -> None:
        from redis.asyncio import Redis

        self._redis: Any = Redis.from_url(url)

    async def hit(self, client: str, limit: int) -> int | None:
        """Record a request; None when allowed, else seconds until the window resets."""
        now = time.time()
        key = f"rca:ratelimit:{client}:{int(now // 60)}"
        pipeline = self._redis.pipeline()
        pipeline.incr(key)
        pipeline.expire(key, 90)
        count, _ = await pipeline.execute()
        return None if int(count) <= limit else max(1, int(60 - now % 60))

    async def ping(self) -> bool:
        """One round trip, for readiness."""
        return bool(await self._redis.ping())

    async def close(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()


def client_key(request: Request, keyring: KeyRing | None = None) -> str:
    """Rate-limit bucket: a valid API key's digest, else the client address.

    A key the keyring does not know (and any key with authentication off) counts against the
    address, so bogus keys neither escape the limit nor grow the limiter's table.
    """
    key = presented_key(request)
    if key and keyring is not None and keyring.identify(key) is not None:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return "addr:" + (request.client.host if request.client else "unknown")


class BodySizeLimit:
    """Reject request bodies over ``max_bytes`` (declared or streamed) with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check Content-Length first, then count streamed bytes."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        too_large = error_response(
            413, "payload_too_large", f"request body is larger than {self.max_bytes} bytes"
        )
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await too_large(scope, receive, send)
            return
        if declared is None and scope.get("method") in ("POST", "PUT", "PATCH"):
            # A chunked body is read up to the cap before the app sees it: the framework would
            # turn an error raised while it reads the body into a 400.
            buffered, complete = await self._buffer(receive)
            if not complete:
                await too_large(scope, receive, send)
                return
            receive = _replay(buffered, receive)
        seen = 0

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, counted_receive, send)
        except _BodyTooLarge:
            await too_large(scope, receive, send)

    async def _buffer(self, receive: Receive) -> tuple[list[Message], bool]:
        """The body's messages, and False when it passed the cap before it ended."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, True
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                return messages, False
            if not message.get("more_body", False):
                return messages, True


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out ``messages`` first, then reads on."""
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


class _BodyTooLarge(Exception):
    """Raised inside the app when a streamed body passes the cap."""


class RequestPipeline:
    """Request id, latency metric, security headers and rate limit, as one ASGI layer.

    One plain ASGI middleware instead of four ``@app.middleware("http")`` functions: each of
    those runs the rest of the app in a new task with memory streams between them, which
    under load cost more interpreter time than the request's own routing.
    """

    def __init__(
        self, app: ASGIApp, limiter: RateLimiter | None = None, per_minute: int = 0
    ) -> None:
        self.app = app
        self.limiter = limiter if per_minute > 0 else None
        self.per_minute = per_minute

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Tag the request, time it, add the headers, and refuse it over the rate limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _REQUEST_ID_RE.match(given) else uuid.uuid4().hex
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status = 500

        async def send_tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
                headers["X-Request-ID"] = request_id
            await send(message)

        try:
            refusal = await self._rate_limited(scope)
            if refusal is not None:
                await refusal(scope, receive, send_tagged)
            else:
                await self.app(scope, receive, send_tagged)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", "unmatched")
            REQUEST_LATENCY.labels(scope["method"], template, str(status)).observe(
                time.perf_counter() - started
            )
            request_id_var.reset(token)

    async def _rate_limited(self, scope: Scope) -> Response | None:
        """The 429 response when this request passes its client's limit, else None."""
        path = scope["path"]
        if self.limiter is None or path in RATE_LIMIT_EXEMPT or path.startswith("/static/"):
            return None
        request = Request(scope)
        retry_after = await self.limiter.hit(
            client_key(request, request.app.state.keyring), self.per_minute
        )
        if retry_after is None:
            return None
        return error_response(
            429,
            "rate_limited",
            f"rate limit of {self.per_minute} requests per minute exceeded",
            **{"Retry-After": str(retry_after)},
        )


def install_middleware(
    app: FastAPI, limiter: RateLimiter | None, per_minute: int, max_body: int
) -> None:
    """Add the middleware stack to ``app`` (the last added runs first)."""
    app.add_middleware(BodySizeLimit, max_bytes=max_body)
    app.add_middleware(RequestPipeline, limiter=limiter, per_minute=per_minute)
