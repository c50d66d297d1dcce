"""Retrieval routes: ``POST /retrieve`` (budgeted context) and ``POST /rag/query`` (ranked nodes).

Thin by design: parse, call the engine, map. Errors come from the engine as ``AppError``
subclasses (422 blank query, 404 no collection, 503 vector store or embedder failure).
Routes are sync so Chroma's blocking calls run in FastAPI's thread pool.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from app.api.deps import RetrievalEngineDep, get_app_settings
from app.api.retrieval_schemas import (
    RagContextPublic,
    RagQueryCreate,
    RagQueryPublic,
    RetrievalCreate,
)
from app.core.errors import ValidationFailed
from app.rag.query import NOTHING_TO_SEARCH
from app.runtime import intake_settings, query_builder

router = APIRouter(tags=["retrieval"])

_ERROR_EXAMPLE = {"error": {"code": "…", "message": "…"}}
_RESPONSES: dict[int | str, dict[str, Any]] = {
    422: {"description": "Empty, blank or too long query; invalid limit."},
    503: {
        "description": "The vector store or another dependency failed.",
        "content": {"application/json": {"example": _ERROR_EXAMPLE}},
    },
}


@router.post(
    "/retrieve",
    response_model=RagContextPublic,
    responses={
        404: {
            "description": "None of the requested collections exists.",
            "content": {"application/json": {"example": _ERROR_EXAMPLE}},
        },
        **_RESPONSES,
    },
)
def retrieve(
    body: RetrievalCreate, engine: RetrievalEngineDep, request: Request
) -> RagContextPublic:
    """Ranked context chunks from the base and optional user collection, under a token budget.

    An ``incident`` instead of a ``query`` is turned into search text by the one query builder
    (``app.rag.query``), the same text the ``rag`` node searches with.
    """
    if body.incident is not None:
        build = query_builder(intake_settings(get_app_settings(request)))
        query = build(body.incident.model_dump(exclude_none=True))
        if not query.strip():
            raise ValidationFailed(NOTHING_TO_SEARCH)
    else:
        query = body.query or ""
    retrieval = engine.retrieve_collections(query, body.collection_names(), body.limit)
    packed = engine.pack_context(query, retrieval.docs)
    return RagContextPublic.from_results(retrieval, packed)


@router.post("/rag/query", response_model=RagQueryPublic, responses=_RESPONSES)
def rag_query(body: RagQueryCreate, engine: RetrievalEngineDep) -> RagQueryPublic:
    """Ranked knowledge-base passages for a question (an agent-tool friendly shape)."""
    started = time.perf_counter()
    retrieval = engine.retrieve(body.query, body.limit or engine.config.default_limit)
    return RagQueryPublic.from_retrieval(retrieval, time.perf_counter() - started)
