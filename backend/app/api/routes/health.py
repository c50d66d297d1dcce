"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.deps import get_identity
from app.core.metrics import REVIEWS_PENDING

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness only: the process answers. No dependency is touched."""
    return {"status": "ok"}


@router.get("/ready", dependencies=[Depends(get_identity)])
async def ready(request: Request) -> JSONResponse:
    """Readiness: knowledge base loaded, model verified, checkpointer open."""
    state = request.app.state
    components: dict[str, Any] = {}
    reasons: list[str] = []
    knowledge = getattr(state, "knowledge", None)
    count = knowledge.store.count() if knowledge is not None else 0
    components["knowledge_base"] = {"ok": count > 0, "docs": count}
    if count == 0:
        reasons.append("knowledge base not loaded")
    model_ok = getattr(state, "embedder", None) is not None
    components["embedding_model"] = {"ok": model_ok}
    if not model_ok:
        reasons.append("embedding model not verified")
    runtime = getattr(state, "runtime", None)
    checkpointer_ok = bool(runtime is not None and runtime.checkpointer_open)
    components["checkpointer"] = {"ok": checkpointer_ok}
    if not checkpointer_ok:
        reasons.append("checkpointer not open")
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
