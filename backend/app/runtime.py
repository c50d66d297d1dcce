"""Everything a running service holds, built once: used by the API lifespan and the CLI.

``open_runtime(settings)`` verifies the model, ingests the knowledge base, opens the SQLite
checkpointer, incident index, alert fingerprints and notification outbox, builds the evidence
sources that are configured (Prometheus, log files), compiles the graph and finishes runs a crash
interrupted.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

from app.core.config import Settings
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS
from app.evidence.sources.collector import build_collector
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.redaction import Redactor
from app.incidents.service import IncidentService
from app.intake.notify import WebhookNotifier, build_notifier
from app.intake.settings import IntakeSettings
from app.rag.embedding import Embedder, default_embedder
from app.rag.engine import RetrievalEngine, build_retrieval_engine
from app.rag.history import IncidentHistory
from app.rag.knowledge import KnowledgeBase, build_knowledge_base
from app.rag.query import QueryBuilder, incident_query_builder
from app.rag.rewrite import build_query_rewriter
from app.rag.store import VectorStore
from app.rca.factory import build_chat_model, build_generator
from app.rca.grounding import CitationChecker
from app.storage.base import StateBackend
from app.storage.sqlite.backend import open_sqlite_backend

logger = logging.getLogger(__name__)

SHUTDOWN_DRAIN_SECONDS = 5.0


@dataclass
class Runtime:
    """The long-lived objects of one process."""

    settings: Settings
    embedder: Embedder
    knowledge: KnowledgeBase
    retriever: RetrievalEngine
    incidents: IncidentService
    backend: StateBackend
    notifier: WebhookNotifier | None = None
    checkpointer_open: bool = True


def build_retriever(settings: Settings, knowledge: KnowledgeBase) -> RetrievalEngine:
    """The hybrid engine the rag node and the retrieval APIs share."""
    rewriter = build_query_rewriter(settings, build_chat_model(settings))
    return build_retrieval_engine(settings, knowledge, rewriter=rewriter)


def open_state_backend(settings: Settings) -> AbstractAsyncContextManager[StateBackend]:
    """PostgreSQL when ``RCA_DATABASE_URL`` is set (shared by workers), else SQLite."""
    if settings.database_url is not None:
        from app.storage.postgres.backend import open_postgres_backend

        return open_postgres_backend(
            settings.database_url.get_secret_value(), timeout=settings.database_timeout_seconds
        )
    return open_sqlite_backend(settings.checkpoint_db_path, settings.sqlite_synchronous)


def intake_settings(settings: Settings) -> IntakeSettings:
    """The intake's view of the settings."""
    url = settings.notify_webhook_url
    return IntakeSettings(
        notify_webhook_url=url.get_secret_value() if url else None,
        notify_timeout_seconds=settings.notify_timeout_seconds,
        notify_retries=settings.notify_retries,
        notify_reminder_after_minutes=settings.notify_reminder_after_minutes,
        ui_base_url=settings.ui_base_url,
        error_code_patterns=tuple(settings.error_code_patterns or DEFAULT_ERROR_CODE_PATTERNS),
        parse_evidence=settings.parse_evidence,
    )


def query_builder(intake: IntakeSettings) -> QueryBuilder:
    """The rag query: with the evidence parser's terms unless ``RCA_PARSE_EVIDENCE`` is off."""
    return incident_query_builder(
        parse_evidence=intake.parse_evidence, patterns=intake.error_code_patterns
    )


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Build the runtime; close the databases on exit."""
    embedder = default_embedder()
    knowledge = build_knowledge_base(settings, embedder)
    retriever = build_retriever(settings, knowledge)
    history = IncidentHistory(
        VectorStore(knowledge.store.client, embedder, settings.history_collection),
        floor=settings.score_floor,
    )
    intake = intake_settings(settings)
    redactor = Redactor(settings.redaction_patterns)
    collector = build_collector(settings)
    async with open_state_backend(settings) as backend:
        notifier = build_notifier(intake, backend.outbox)
        deps = GraphDeps(
            retriever=retriever,
            generator=build_generator(settings),
            knowledge_version=lambda: knowledge.version,
            top_k=settings.top_k,
            checker=CitationChecker(embedder),
            history=history,
            history_top_k=settings.history_top_k,
            build_query=query_builder(intake),
            collector=collector,
            redact=redactor.data,
        )
        service = IncidentService(
            build_graph(deps, backend.checkpointer),
            backend.repository,
            observers=[notifier] if notifier else [],
            redactor=redactor,
            history=history,
            idempotency_ttl=timedelta(hours=settings.idempotency_key_ttl_hours),
            checker=deps.checker,
        )
        if history.count() == 0:
            learned = await service.rebuild_history()
            if learned:
                logger.info("rebuilt incident history from %d approved incident(s)", learned)
        recovered = await service.recover()
        if recovered:
            logger.info("recovered %d interrupted incident run(s)", recovered)
        runtime = Runtime(
            settings,
            embedder,
            knowledge,
            retriever,
            service,
            backend,
            notifier=notifier,
        )
        try:
            yield runtime
        finally:
            runtime.checkpointer_open = False
            if notifier is not None:
                # Bounded: whatever is still pending stays in the outbox for the next start.
                await notifier.drain(timeout=SHUTDOWN_DRAIN_SECONDS)
            retriever.close()
