"""Liveness and readiness."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.deps import UNAUTHORIZED, get_identity
from app.core.metrics import REVIEWS_PENDING

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness only: the process answers. No dependency is touched."""
    return {"status": "ok"}


HEARTBEAT_SECONDS = 1.0


async def probe(check: Callable[[], Awaitable[Any]]) -> tuple[bool, Any]:
    """Run one remote check with a 1-second budget; (ok, value or a short reason)."""
    try:
        return True, await asyncio.wait_for(check(), HEARTBEAT_SECONDS)
    except TimeoutError:
        return False, f"no answer within {HEARTBEAT_SECONDS:.0f} s"
    except Exception as exc:  # any failure of a dependency means "not ready", never a 500
        return False, f"unreachable ({type(exc).__name__})"


@router.get("/ready", dependencies=[Depends(get_identity)], responses=UNAUTHORIZED)
async def ready(request: Request) -> JSONResponse:
    """Readiness: cheap local checks plus one heartbeat (≤ 1 s) per configured remote backend."""
    state = request.app.state
    settings = state.settings
    runtime = getattr(state, "runtime", None)
    components: dict[str, dict[str, Any]] = {}

    knowledge = getattr(state, "knowledge", None)
    if knowledge is None:
        components["knowledge_base"] = {"ok": False, "reason": "not loaded"}
    elif settings.chroma_url:
        ok, value = await probe(lambda: asyncio.to_thread(knowledge.store.count))
        components["knowledge_base"] = (
            {"ok": value > 0, "docs": knowledge.report.documents, "backend": "chroma-server"}
            if ok
            else {"ok": False, "reason": f"vector store {value}"}
        )
    else:
        count = knowledge.store.count()
        components["knowledge_base"] = {"ok": count > 0, "docs": knowledge.report.documents}
    components["embedding_model"] = {"ok": getattr(state, "embedder", None) is not None}
    components["checkpointer"] = {"ok": bool(runtime is not None and runtime.checkpointer_open)}
    if runtime is not None and runtime.backend.ping is not None:
        ok, value = await probe(runtime.backend.ping)
        components["database"] = {"ok": ok} if ok else {"ok": False, "reason": value}
    limiter = getattr(state, "rate_limiter", None)
    if settings.redis_url and limiter is not None and hasattr(limiter, "ping"):
        ok, value = await probe(limiter.ping)
        components["redis"] = {"ok": ok} if ok else {"ok": False, "reason": value}

    reasons = [
        f"{name}: {c.get('reason', 'not ready')}" for name, c in components.items() if not c["ok"]
    ]
    body = {"ready": not reasons, "components": components, "reasons": reasons}
    return JSONResponse(body, status_code=200 if not reasons else 503)


@router.get("/metrics", dependencies=[Depends(get_identity)], include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus metrics (any valid key)."""
    service = getattr(request.app.state, "incidents", None)
    if service is not None:
        _, pending = await service.repository.page("awaiting_review", 1, 0)
        REVIEWS_PENDING.set(pending)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
