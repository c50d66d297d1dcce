"""Knowledge-base admin routes: ``GET /api/knowledge`` and ``POST /api/knowledge/reload``.

Any valid key may read the state (collections with counts, the embedding model, the last ingest);
only an admin may reload. A reload re-ingests from the sources incrementally, then rebuilds the
retrieval engine's keyword index; searches keep being served meanwhile (see
``KnowledgeBase.reload``). A second reload while one runs gets 409. Routes are sync so Chroma's
and the embedder's blocking calls run in FastAPI's thread pool.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from app.api.deps import AUTH_ERRORS, UNAUTHORIZED, AdminDep, RetrievalEngineDep, SubmitterDep
from app.core.errors import (
    AppError,
    Conflict,
    KnowledgeBaseError,
    NotReady,
    UpstreamError,
    ValidationFailed,
)
from app.rag.knowledge import IngestReport, KnowledgeBase

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/api/knowledge", tags=["knowledge"])

_ERROR_EXAMPLE = {"error": {"code": "…", "message": "…"}}


class CollectionPublic(BaseModel):
    """One collection of the vector store."""

    name: str
    count: int
    embedding_model: str | None = None


class ModelPublic(BaseModel):
    """The embedding model the service embeds with."""

    id: str
    sha256: str


class IngestPublic(BaseModel):
    """The summary of one ingest."""

    #: Chunks in the collection: documents and the windows of the long ones.
    count: int
    #: Of ``count``, the windows (``RCA_WINDOW_TOKENS``; 0 when off).
    windows: int
    version: str
    added: int
    unchanged: int
    removed: int
    embedded: int
    files: int
    warnings: list[str]
    finished_at: str | None
    duration_seconds: float

    @classmethod
    def from_report(cls, report: IngestReport) -> IngestPublic:
        """The public form of an ingest report."""
        return cls.model_validate(report.as_dict())


class FamilyPublic(BaseModel):
    """One error-doc family: its services and the signals derived from it at ingest."""

    id: str
    error_code: str | None = None
    error_name: str | None = None
    source: str | None = None
    services: list[str] = Field(default_factory=list)
    signals: dict[str, list[str]] = Field(default_factory=dict)


class KnowledgePublic(BaseModel):
    """The knowledge base: its collection, backend, model, all collections and the last ingest."""

    collection: str
    backend: str
    model: ModelPublic
    collections: list[CollectionPublic]
    reloading: bool
    last_ingest: IngestPublic
    families: list[FamilyPublic] = Field(
        default_factory=list,
        description="Error-doc families with their services and expected signals (first 500)",
    )


def get_knowledge(request: Request) -> KnowledgeBase:
    """The knowledge base the lifespan built; 503 while it is not built."""
    knowledge = getattr(request.app.state, "knowledge", None)
    if not isinstance(knowledge, KnowledgeBase):
        raise NotReady("the knowledge base is not ready")
    return knowledge


@router.get(
    "",
    response_model=KnowledgePublic,
    responses={
        **UNAUTHORIZED,
        503: {"content": {"application/json": {"example": _ERROR_EXAMPLE}}},
    },
)
def read_knowledge(request: Request, identity: SubmitterDep) -> KnowledgePublic:
    """Collections with their counts, the embedding model and the last ingest's summary."""
    knowledge = get_knowledge(request)
    try:
        described: dict[str, Any] = knowledge.describe()
    except AppError:
        raise
    except Exception as exc:
        logger.exception("describing the knowledge base failed")
        raise UpstreamError("the vector store failed; try again later") from exc
    return KnowledgePublic.model_validate(described)


@router.post(
    "/reload",
    response_model=IngestPublic,
    responses={
        **AUTH_ERRORS,
        409: {"description": "A reload is already running."},
        422: {"description": "A knowledge source is malformed; nothing was changed."},
        503: {"description": "The vector store or embedder failed."},
    },
)
def reload_knowledge(
    request: Request, engine: RetrievalEngineDep, identity: AdminDep
) -> IngestPublic:
    """Re-ingest the sources incrementally, rebuild the keyword index, return the summary."""
    knowledge = get_knowledge(request)
    try:
        report = knowledge.reload(after=[engine.refresh])
    except Conflict:
        raise
    except KnowledgeBaseError as exc:
        # Parsing runs before any change; its messages name source files relative to the
        # sources folder and the entry, which is what the admin needs to fix them.
        logger.warning("knowledge reload rejected: %s", exc.message)
        raise ValidationFailed(f"knowledge sources rejected: {exc.message}") from exc
    except Exception as exc:
        error_id = uuid.uuid4().hex[:12]
        logger.exception("knowledge reload %s failed", error_id)
        raise UpstreamError(f"knowledge reload failed (id {error_id}); try again later") from exc
    logger.info("knowledge reloaded by %s: %s", identity.name, report.summary())
    return IngestPublic.from_report(report)
