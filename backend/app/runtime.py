"""Everything a running service holds, built once: used by the API lifespan and the CLI.

``open_runtime(settings)`` verifies the model, ingests the knowledge base, opens the SQLite
checkpointer and incident index, compiles the graph and finishes runs a crash interrupted.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from app.core.config import Settings
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.redaction import Redactor
from app.incidents.repository import SqliteIncidentRepository
from app.incidents.service import IncidentService
from app.rag.embedding import Embedder, default_embedder
from app.rag.knowledge import KnowledgeBase, build_knowledge_base
from app.rag.retrieve import DenseRetriever, Retriever
from app.rca.factory import build_generator
from app.rca.grounding import CitationChecker

logger = logging.getLogger(__name__)


@dataclass
class Runtime:
    """The long-lived objects of one process."""

    settings: Settings
    embedder: Embedder
    knowledge: KnowledgeBase
    retriever: Retriever
    incidents: IncidentService
    checkpointer_open: bool = True


def build_retriever(settings: Settings, knowledge: KnowledgeBase) -> Retriever:
    """The retriever the rag node uses."""
    return DenseRetriever(knowledge.store)


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Build the runtime; close the databases on exit."""
    embedder = default_embedder()
    knowledge = build_knowledge_base(settings, embedder)
    retriever = build_retriever(settings, knowledge)
    settings.state_dir.mkdir(parents=True, exist_ok=True)
    async with (
        aiosqlite.connect(settings.checkpoint_db_path) as checkpoint_db,
        aiosqlite.connect(settings.checkpoint_db_path) as index_db,
    ):
        await checkpoint_db.execute("PRAGMA journal_mode=WAL")
        for connection in (checkpoint_db, index_db):
            await connection.execute("PRAGMA busy_timeout=5000")
        checkpointer = AsyncSqliteSaver(checkpoint_db)
        await checkpointer.setup()
        repository = SqliteIncidentRepository(index_db)
        await repository.setup()
        deps = GraphDeps(
            retriever=retriever,
            generator=build_generator(settings),
            knowledge_version=lambda: knowledge.version,
            top_k=settings.top_k,
            checker=CitationChecker(embedder),
        )
        service = IncidentService(
            build_graph(deps, checkpointer),
            repository,
            redactor=Redactor(settings.redaction_patterns),
        )
        recovered = await service.recover()
        if recovered:
            logger.info("recovered %d interrupted incident run(s)", recovered)
        runtime = Runtime(settings, embedder, knowledge, retriever, service)
        try:
            yield runtime
        finally:
            runtime.checkpointer_open = False
