"""Dependency alias for the retrieval engine the lifespan put on ``app.state.retrieval``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.core.errors import NotReady
from app.rag.engine import RetrievalEngine


def get_retrieval_engine(request: Request) -> RetrievalEngine:
    """The application's retrieval engine.

    Raises:
        NotReady: The engine has not been built yet (startup still running or failed).
    """
    engine = getattr(request.app.state, "retrieval", None)
    if not isinstance(engine, RetrievalEngine):
        raise NotReady("the retrieval engine is not ready")
    return engine


RetrievalEngineDep = Annotated[RetrievalEngine, Depends(get_retrieval_engine)]
