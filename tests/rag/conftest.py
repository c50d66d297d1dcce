"""Fixtures for the retrieval-engine tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.rag.helpers import RerankServer

from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.knowledge import KnowledgeBase


@pytest.fixture
def rerank_server() -> Iterator[RerankServer]:
    """A scripted rerank server; set ``.script`` before use."""
    with RerankServer() as server:
        yield server


@pytest.fixture
def engine(knowledge: KnowledgeBase) -> Iterator[RetrievalEngine]:
    """The real engine over the shared knowledge base with default settings."""
    built = RetrievalEngine(knowledge.store, EngineConfig())
    try:
        yield built
    finally:
        built.close()
