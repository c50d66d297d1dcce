"""The loaded knowledge base: the vector store kept in sync with the sources, plus the last ingest.

Every ingest goes through one path, ``ingest_sources``: read the sources into content-hashed
chunks, then make the collection hold exactly those chunks. Ids already stored are not embedded
again (their metadata is refreshed when it changed, e.g. an entry number), new ids are embedded
and written, and ids no longer in the sources are deleted. A changed entry has a new id, so it is
one add plus one removal. New chunks are written before old ones are deleted, so a search that
runs during a reload sees the old or the new text of an entry, never neither.

With a Chroma server or a persistent store a restart with an unchanged corpus embeds nothing. The
in-memory backend starts empty, so its first ingest adds everything (``build_knowledge_base``
also drops a leftover collection of the same name there, as the earlier rebuild-at-start did).
Each ingest logs ``ingested N error-doc chunk(s)`` (and its windows) and the one summary line
``ingest: added=A unchanged=U removed=R embedded=E``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.config import Settings
from app.core.errors import Conflict
from app.rag.embedding import Embedder
from app.rag.ingest import ID_PREFIX as ERROR_DOC_PREFIX
from app.rag.ingest import KnowledgeChunk, knowledge_version
from app.rag.signals import doc_services, read_signals
from app.rag.sources import configured_source, load_sources
from app.rag.store import Progress, VectorStore, backend_kind, make_chroma_client
from app.rag.windows import DEFAULT_WINDOW_STRIDE, is_window, with_windows

logger = logging.getLogger(__name__)

#: Families listed by ``GET /api/knowledge`` (the error docs; runbooks are sections, not families).
MAX_LISTED_FAMILIES = 500


@dataclass
class SyncResult:
    """What making a collection match a set of chunks did."""

    added: int = 0
    unchanged: int = 0
    removed: int = 0
    embedded: int = 0
    metadata_updated: int = 0


@dataclass
class IngestReport:
    """What one ingest stored and changed."""

    #: Chunks in the collection after the ingest: documents and their windows.
    count: int
    #: Error-docs code -> chunk id (error docs only; runbooks never replace an entry here).
    ids_by_code: dict[str, str]
    version: str
    warnings: list[str] = field(default_factory=list)
    added: int = 0
    unchanged: int = 0
    removed: int = 0
    embedded: int = 0
    #: Source files read, relative to the sources folder.
    files: list[str] = field(default_factory=list)
    finished_at: datetime | None = None
    duration_seconds: float = 0.0
    #: Of ``count``, the windows of long documents (``RCA_WINDOW_TOKENS``; 0 when off).
    windows: int = 0

    @property
    def documents(self) -> int:
        """Documents in the collection (entries and runbook sections), windows left out."""
        return self.count - self.windows

    def headline(self) -> str:
        """``ingested N error-doc chunk(s)``, plus `` and W window(s)`` when windows are on."""
        windows = f" and {self.windows} window(s)" if self.windows else ""
        return f"ingested {self.documents} error-doc chunk(s){windows}"

    def summary(self) -> str:
        """The one summary line: ``ingest: added=A unchanged=U removed=R embedded=E``."""
        return (
            f"ingest: added={self.added} unchanged={self.unchanged} "
            f"removed={self.removed} embedded={self.embedded}"
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form (for the admin API)."""
        return {
            "count": self.count,
            "windows": self.windows,
            "version": self.version,
            "added": self.added,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "embedded": self.embedded,
            "files": len(self.files),
            "warnings": list(self.warnings),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "duration_seconds": round(self.duration_seconds, 3),
        }


def sync_store(
    store: VectorStore,
    chunks: Sequence[KnowledgeChunk],
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> SyncResult:
    """Make ``store`` hold exactly ``chunks``, embedding only ids it does not hold yet.

    Args:
        store: The collection to update.
        chunks: The wanted content (ids are content hashes; a repeated id is kept once).
        batch_size: Chunks embedded per batch.
        progress: ``progress(done, total)`` while new chunks are embedded.

    Returns:
        Counts of added, unchanged, removed and embedded chunks.
    """
    wanted = {c.id: c for c in reversed(chunks)}  # the first of a repeated id wins
    stored = store.metadatas()
    new = [c for c in wanted.values() if c.id not in stored]
    stale = [i for i in stored if i not in wanted]
    relabel = [c for c in wanted.values() if c.id in stored and stored[c.id] != dict(c.metadata)]
    if progress is not None:
        progress(0, len(new))
    embedded = store.upsert(new, batch_size=batch_size, progress=progress)
    if relabel:
        store.update_metadata(relabel)
    store.delete(stale)
    return SyncResult(
        added=len(new),
        unchanged=len(wanted) - len(new),
        removed=len(stale),
        embedded=embedded,
        metadata_updated=len(relabel),
    )


def ingest_sources(
    store: VectorStore,
    source: Path,
    *,
    batch_size: int | None = None,
    progress: Progress | None = None,
    window_tokens: int = 0,
    window_stride: int = DEFAULT_WINDOW_STRIDE,
    sentence_chunks: bool = False,
) -> IngestReport:
    """Read ``source`` (folder or file) and sync ``store`` to it; log the summary line.

    Args:
        store: The knowledge-base collection.
        source: A sources folder or a single error-docs / runbook file.
        batch_size: Chunks embedded per batch.
        progress: ``progress(done, total)`` while new chunks are embedded.
        window_tokens: Store windows of this many model tokens beside each longer document
            (``app.rag.windows``); 0 stores the documents alone.
        window_stride: Model tokens between window starts.
        sentence_chunks: Also store each sentence of a document as a passage.

    Returns:
        The report of this ingest.

    Raises:
        KnowledgeBaseError: A source is missing or malformed; the collection is untouched.
    """
    started = time.perf_counter()
    loaded = load_sources(source, count_tokens=store.embedder.count_tokens)
    for warning in loaded.warnings:
        logger.warning(warning)
    stored = with_windows(loaded.chunks, window_tokens, window_stride, sentences=sentence_chunks)
    result = sync_store(store, stored, batch_size=batch_size, progress=progress)
    ids = list(dict.fromkeys(c.id for c in loaded.chunks))
    report = IngestReport(
        count=store.count(),
        windows=len(stored) - len(loaded.chunks),
        ids_by_code={
            str(c.metadata["error_code"]): c.id
            for c in loaded.chunks
            if c.id.startswith(ERROR_DOC_PREFIX) and "error_code" in c.metadata
        },
        version=knowledge_version(ids),
        warnings=loaded.warnings,
        added=result.added,
        unchanged=result.unchanged,
        removed=result.removed,
        embedded=result.embedded,
        files=loaded.files,
        finished_at=datetime.now(UTC),
        duration_seconds=time.perf_counter() - started,
    )
    if result.metadata_updated:
        logger.info("refreshed the metadata of %d unchanged chunk(s)", result.metadata_updated)
    logger.info("%s", report.headline())
    logger.info("%s", report.summary())
    return report


def ingest_error_docs(store: VectorStore, path: Path) -> IngestReport:
    """Sync ``store`` to one error-docs file (kept for callers of the single-file API)."""
    return ingest_sources(store, path)


@dataclass
class KnowledgeBase:
    """The knowledge-base collection, where it comes from and the report of the last ingest."""

    store: VectorStore
    report: IngestReport
    #: The folder or file the collection is synced to (``None``: cannot be reloaded).
    source: Path | None = None
    #: ``server``, ``persistent`` or ``ephemeral``.
    backend: str = "ephemeral"
    batch_size: int | None = None
    window_tokens: int = 0
    window_stride: int = DEFAULT_WINDOW_STRIDE
    sentence_chunks: bool = False
    _reload_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @property
    def version(self) -> str:
        """Hash over the ingested ids, recorded in every RCA's provenance."""
        return self.report.version

    @property
    def reloading(self) -> bool:
        """Whether a reload is running right now."""
        return self._reload_lock.locked()

    def reload(
        self,
        after: Sequence[Callable[[], object]] = (),
        progress: Progress | None = None,
    ) -> IngestReport:
        """Re-ingest from the sources (incrementally) and swap in the new report.

        Only one reload runs at a time; searches keep being served meanwhile. The callables in
        ``after`` (e.g. ``RetrievalEngine.refresh``) run once the collection is updated -- also
        when the ingest failed, so derived indexes match whatever the collection now holds.

        Args:
            after: Callables run after the sync, inside the reload lock.
            progress: ``progress(done, total)`` while new chunks are embedded.

        Returns:
            The new report (also ``self.report``).

        Raises:
            Conflict: Another reload is running.
            KnowledgeBaseError: A source is missing or malformed; the collection is untouched.
        """
        if self.source is None:
            raise Conflict("this knowledge base has no sources to reload from")
        if not self._reload_lock.acquire(blocking=False):
            raise Conflict("a knowledge reload is already running")
        try:
            report = ingest_sources(
                self.store,
                self.source,
                batch_size=self.batch_size,
                progress=progress,
                window_tokens=self.window_tokens,
                window_stride=self.window_stride,
                sentence_chunks=self.sentence_chunks,
            )
            # One attribute assignment: readers see the old report or the new one, never a mix.
            self.report = report
            return report
        finally:
            try:
                for callback in after:
                    callback()
            finally:
                self._reload_lock.release()

    def describe(self) -> dict[str, Any]:
        """Collections with counts, the model, the last ingest, the families and their signals."""
        client = self.store.client
        collections = []
        for collection in client.list_collections():
            metadata = collection.metadata or {}
            collections.append(
                {
                    "name": collection.name,
                    "count": int(collection.count()),
                    "embedding_model": metadata.get("embedding_model"),
                }
            )
        collections.sort(key=lambda c: (c["name"] != self.store.collection_name, c["name"]))
        return {
            "collection": self.store.collection_name,
            "backend": self.backend,
            "model": self.store.model,
            "collections": collections,
            "reloading": self.reloading,
            "last_ingest": self.report.as_dict(),
            "families": self.families(),
        }

    def documents(self) -> list[KnowledgeChunk]:
        """Every document of the collection: its entries and sections, without their windows."""
        return [c for c in self.store.all_chunks() if not is_window(c.metadata)]

    def families(self, limit: int = MAX_LISTED_FAMILIES) -> list[dict[str, Any]]:
        """Error-doc chunks with their services and expected signals, in code order."""
        rows = [
            {
                "id": chunk_id,
                "error_code": meta.get("error_code"),
                "error_name": meta.get("error_name"),
                "source": meta.get("source"),
                "services": doc_services(meta),
                "signals": read_signals(meta),
            }
            for chunk_id, meta in self.store.metadatas().items()
            if chunk_id.startswith(ERROR_DOC_PREFIX) and not is_window(meta)
        ]
        rows.sort(key=lambda r: (str(r["error_code"] or ""), r["id"]))
        return rows[:limit]


def build_knowledge_base(
    settings: Settings,
    embedder: Embedder,
    path: Path | None = None,
    collection_name: str | None = None,
    *,
    progress: Progress | None = None,
    rebuild: bool = False,
) -> KnowledgeBase:
    """Open the configured Chroma backend and sync the knowledge collection to the sources.

    Args:
        settings: Backend, sources and collection settings.
        embedder: The embedding model.
        path: A sources folder or file overriding the settings (``rca ingest PATH``).
        collection_name: A collection overriding ``RCA_COLLECTION_NAME``.
        progress: ``progress(done, total)`` while new chunks are embedded.
        rebuild: Drop the collection first and embed everything again (always done for the
            in-memory backend).

    Returns:
        The knowledge base with the report of this ingest.

    Raises:
        KnowledgeBaseError: A source is missing or malformed.
        ConfigurationError: The persisted collection holds vectors of another model.
    """
    client = make_chroma_client(settings)
    name = collection_name or settings.collection_name
    backend = backend_kind(settings)
    if (rebuild or backend == "ephemeral") and name in {c.name for c in client.list_collections()}:
        client.delete_collection(name)
    store = VectorStore(client, embedder, name)
    source = configured_source(settings, path)
    report = ingest_sources(
        store,
        source,
        batch_size=settings.ingest_batch_size,
        progress=progress,
        window_tokens=settings.window_tokens,
        window_stride=settings.window_stride,
        sentence_chunks=settings.sentence_chunks,
    )
    return KnowledgeBase(
        store=store,
        report=report,
        source=source,
        backend=backend,
        batch_size=settings.ingest_batch_size,
        window_tokens=settings.window_tokens,
        window_stride=settings.window_stride,
        sentence_chunks=settings.sentence_chunks,
    )
