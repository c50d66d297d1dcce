"""The loaded knowledge base: the vector store built from the sources, plus what was ingested."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from app.core.config import Settings
from app.rag.embedding import Embedder
from app.rag.ingest import knowledge_version, load_error_docs
from app.rag.store import VectorStore, make_chroma_client

logger = logging.getLogger(__name__)


@dataclass
class IngestReport:
    """What one ingest stored."""

    count: int
    ids_by_code: dict[str, str]
    version: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class KnowledgeBase:
    """The error-docs collection and the report of the ingest that built it."""

    store: VectorStore
    report: IngestReport

    @property
    def version(self) -> str:
        """Hash over the ingested ids, recorded in every RCA's provenance."""
        return self.report.version


def ingest_error_docs(store: VectorStore, path: Path) -> IngestReport:
    """Rebuild ``store`` from the error-docs file at ``path``."""
    parsed = load_error_docs(path, count_tokens=store.embedder.count_tokens)
    store.reset(parsed.chunks)
    ids = [c.id for c in parsed.chunks]
    report = IngestReport(
        count=len(parsed.chunks),
        ids_by_code={str(c.metadata["error_code"]): c.id for c in parsed.chunks},
        version=knowledge_version(ids),
        warnings=parsed.warnings,
    )
    logger.info("ingested %d error-doc chunk(s)", report.count)
    return report


def build_knowledge_base(
    settings: Settings,
    embedder: Embedder,
    path: Path | None = None,
    collection_name: str | None = None,
) -> KnowledgeBase:
    """Open the configured Chroma backend and (re)build the error-docs collection."""
    client = make_chroma_client(settings)
    store = VectorStore(client, embedder, collection_name or settings.collection_name)
    report = ingest_error_docs(store, path or settings.knowledge_path)
    return KnowledgeBase(store=store, report=report)
