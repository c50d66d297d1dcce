"""The vector store: a Chroma collection of knowledge chunks, queried by our own embeddings.

Every collection call passes our embedding function, so Chroma never builds its stock one.
``similarity = clamp(1 - cosine distance, 0, 1)``: a display approximation, not a probability.

Each collection records the embedding model that made its vectors (``embedding_model`` and
``embedding_model_sha256`` in its metadata). Opening a non-empty collection recorded for another
model raises ``ConfigurationError``: vectors of two models are never mixed in one collection.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import chromadb
from chromadb.api import ClientAPI

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rag.embedding import MODEL_ID, MODEL_SHA256, ChromaEmbeddingFunction, Embedder
from app.rag.ingest import KnowledgeChunk
from app.rag.windows import PARENT_KEY

logger = logging.getLogger(__name__)

#: Collection metadata keys recording the model behind the stored vectors.
MODEL_KEY = "embedding_model"
MODEL_SHA_KEY = "embedding_model_sha256"
#: Chunks embedded and written per Chroma call (also the progress step).
DEFAULT_BATCH_SIZE = 64
#: Chunks read per ``get`` (see ``VectorStore._read_all``).
READ_PAGE = 5000
#: ``progress(done, total)`` after each written batch.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ScoredChunk:
    """A stored chunk with its dense similarity to a query."""

    id: str
    text: str
    metadata: dict[str, Any]
    similarity: float


def similarity_from_distance(distance: float) -> float:
    """Cosine distance to a similarity clamped into [0, 1]."""
    return max(0.0, min(1.0, 1.0 - float(distance)))


def make_chroma_client(settings: Settings) -> ClientAPI:
    """The Chroma client chosen by settings: server, then persistent, else in-memory."""
    if settings.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or 8000,
            ssl=url.scheme == "https",
        )
    if settings.chroma_path:
        return chromadb.PersistentClient(path=str(settings.chroma_path))
    return chromadb.EphemeralClient()


def backend_kind(settings: Settings) -> str:
    """``server``, ``persistent`` or ``ephemeral``: the backend ``make_chroma_client`` opens."""
    if settings.chroma_url:
        return "server"
    if settings.chroma_path:
        return "persistent"
    return "ephemeral"


def model_sha256(embedder: Embedder) -> str:
    """The sha256 of the embedder's model file; empty when the embedder has no file."""
    recorded = getattr(embedder, "model_sha256", None)
    if isinstance(recorded, str) and recorded:
        return recorded
    # The pinned model is verified against this digest when it loads.
    return MODEL_SHA256 if embedder.model_id == MODEL_ID else ""


class VectorStore:
    """One Chroma collection, embedded with the project's embedder."""

    def __init__(self, client: ClientAPI, embedder: Embedder, collection_name: str) -> None:
        self.client = client
        self.embedder = embedder
        self.collection_name = collection_name
        self._function = ChromaEmbeddingFunction(embedder)
        self._collection = self._get_or_create()

    @property
    def model(self) -> dict[str, str]:
        """The model this store embeds with: ``{"id", "sha256"}``."""
        return {"id": self.embedder.model_id, "sha256": model_sha256(self.embedder)}

    def _get_or_create(self) -> Any:
        collection = self.client.get_or_create_collection(
            name=self.collection_name,
            embedding_function=self._function,  # type: ignore[arg-type]
            metadata={
                "hnsw:space": "cosine",
                MODEL_KEY: self.embedder.model_id,
                MODEL_SHA_KEY: model_sha256(self.embedder),
            },
        )
        self._check_model(collection)
        return collection

    def _check_model(self, collection: Any) -> None:
        """Refuse a non-empty collection made by another model; record ours where missing."""
        recorded = dict(collection.metadata or {})
        ours = self.model
        recorded_id = recorded.get(MODEL_KEY)
        recorded_sha = recorded.get(MODEL_SHA_KEY)
        differs = (recorded_id and recorded_id != ours["id"]) or (
            recorded_sha and ours["sha256"] and recorded_sha != ours["sha256"]
        )
        if recorded_id == ours["id"] and recorded_sha == ours["sha256"]:
            return
        if differs and collection.count() > 0:
            raise ConfigurationError(
                f"collection '{self.collection_name}' holds vectors of model {recorded_id} "
                f"(sha256 {recorded_sha or 'unrecorded'}) but this process embeds with "
                f"{ours['id']} (sha256 {ours['sha256'] or 'none'}): refusing to mix two models "
                "in one collection; use another RCA_COLLECTION_NAME or rebuild it "
                "(`rca ingest --rebuild`)"
            )
        # Empty, or recorded by an older version without the digest: record this model.
        # ``modify`` replaces the metadata; the distance function cannot be passed again.
        kept = {k: v for k, v in recorded.items() if not k.startswith("hnsw:")}
        collection.modify(metadata={**kept, MODEL_KEY: ours["id"], MODEL_SHA_KEY: ours["sha256"]})
        logger.info("collection %s: recorded embedding model %s", self.collection_name, ours["id"])

    def recorded_model(self) -> dict[str, str]:
        """The model the collection's metadata records: ``{"id", "sha256"}``."""
        metadata = self._collection.metadata or {}
        return {
            "id": str(metadata.get(MODEL_KEY, "")),
            "sha256": str(metadata.get(MODEL_SHA_KEY, "")),
        }

    def reset(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Drop the collection and rebuild it from ``chunks`` (the source file is the truth)."""
        existing = {c.name for c in self.client.list_collections()}
        if self.collection_name in existing:
            self.client.delete_collection(self.collection_name)
        self._collection = self._get_or_create()
        self.add(chunks)

    def add(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Embed and add chunks (ids must be new)."""
        self._write(self._collection.add, chunks, None, None)

    def upsert(
        self,
        chunks: Sequence[KnowledgeChunk],
        *,
        batch_size: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Embed and write chunks, replacing any with the same id; return how many were embedded.

        Args:
            chunks: The chunks to write.
            batch_size: Chunks embedded and written per call (capped by Chroma's limit).
            progress: Called as ``progress(done, total)`` after each batch.

        Returns:
            ``len(chunks)``: every chunk is embedded once.
        """
        self._write(self._collection.upsert, chunks, batch_size, progress)
        return len(chunks)

    def _write(
        self,
        write: Callable[..., Any],
        chunks: Sequence[KnowledgeChunk],
        batch_size: int | None,
        progress: Progress | None,
    ) -> None:
        if not chunks:
            return
        size = max(1, min(batch_size or DEFAULT_BATCH_SIZE, self.client.get_max_batch_size()))
        # Similar lengths in one batch keep the embedder's padding small; order is irrelevant.
        ordered = sorted(chunks, key=lambda c: len(c.text))
        for start in range(0, len(ordered), size):
            batch = ordered[start : start + size]
            vectors = self.embedder.embed_documents([c.text for c in batch])
            write(
                ids=[c.id for c in batch],
                documents=[c.text for c in batch],
                metadatas=[dict(c.metadata) for c in batch],
                embeddings=list(vectors),
            )
            if progress is not None:
                progress(start + len(batch), len(ordered))

    def update_metadata(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Replace the metadata values of stored chunks without embedding them again."""
        size = self.client.get_max_batch_size()
        for start in range(0, len(chunks), size):
            batch = chunks[start : start + size]
            self._collection.update(
                ids=[c.id for c in batch], metadatas=[dict(c.metadata) for c in batch]
            )

    def delete(self, ids: Sequence[str]) -> None:
        """Remove chunks by id (unknown ids are ignored)."""
        size = self.client.get_max_batch_size()
        for start in range(0, len(ids), size):
            self._collection.delete(ids=list(ids[start : start + size]))

    def _read_all(self, include: list[Any]) -> dict[str, list[Any]]:
        """Every stored chunk's ids and ``include`` fields, read a page at a time.

        One ``get`` of a large collection fails inside Chroma's SQLite ("too many SQL
        variables", seen at about 33k chunks), so reads go in pages of ``READ_PAGE``.
        """
        out: dict[str, list[Any]] = {"ids": [], **{field: [] for field in include}}
        offset = 0
        while True:
            got = self._collection.get(include=include, limit=READ_PAGE, offset=offset)
            out["ids"].extend(got["ids"])
            for field in include:
                out[field].extend(got[field] or [])
            if len(got["ids"]) < READ_PAGE:
                return out
            offset += READ_PAGE

    def ids(self) -> list[str]:
        """The ids of every stored chunk."""
        return [str(i) for i in self._read_all([])["ids"]]

    def metadatas(self) -> dict[str, dict[str, Any]]:
        """Every stored chunk's metadata by id (no documents, no vectors)."""
        got = self._read_all(["metadatas"])
        return {str(i): dict(m or {}) for i, m in zip(got["ids"], got["metadatas"], strict=True)}

    def count(self) -> int:
        """Number of stored chunks."""
        return int(self._collection.count())

    def all_chunks(self) -> list[KnowledgeChunk]:
        """Every stored chunk (for keyword indexes kept in sync with the collection)."""
        got = self._read_all(["documents", "metadatas"])
        return [
            KnowledgeChunk(id=i, text=d or "", metadata=dict(m or {}))
            for i, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        ]

    def vectors(self, ids: Sequence[str]) -> dict[str, Any]:
        """The stored vectors of ``ids`` (unknown ids are left out)."""
        found: dict[str, Any] = {}
        for start in range(0, len(ids), READ_PAGE):
            page = list(ids[start : start + READ_PAGE])
            got = self._collection.get(ids=page, include=["embeddings"])
            found.update(zip(map(str, got["ids"]), got["embeddings"], strict=True))
        return found

    def document_vectors(self, doc_ids: Sequence[str]) -> dict[str, list[Any]]:
        """Per document of ``doc_ids``, the vectors of its own chunk and of its windows.

        Unknown ids are left out; a document stored without windows has one vector.
        """
        found: dict[str, list[Any]] = {}
        for start in range(0, len(doc_ids), READ_PAGE):
            page = list(doc_ids[start : start + READ_PAGE])
            own = self._collection.get(ids=page, include=["embeddings"])
            for chunk_id, vector in zip(own["ids"], own["embeddings"], strict=True):
                found.setdefault(str(chunk_id), []).append(vector)
            windows = self._collection.get(
                where={PARENT_KEY: {"$in": page}}, include=["embeddings", "metadatas"]
            )
            for chunk_id, vector, metadata in zip(
                windows["ids"], windows["embeddings"], windows["metadatas"], strict=True
            ):
                parent = str((metadata or {}).get(PARENT_KEY) or chunk_id)
                if parent != chunk_id:
                    found.setdefault(parent, []).append(vector)
        return found

    def query(self, text: str, k: int) -> list[ScoredChunk]:
        """The ``min(k, count)`` nearest chunks to ``text``, best first."""
        return self.query_vector(self.embedder.embed_query(text), k)

    def nearest(self, vector: Any, k: int) -> list[tuple[str, float]]:
        """The ids and similarities of the ``min(k, count)`` nearest chunks, best first.

        No documents or metadata are read: callers that hold the chunks already (the
        engine's keyword index) skip most of a query's cost, which is fetching them.
        """
        if k <= 0:
            return []
        result = self._collection.query(
            query_embeddings=[list(map(float, vector))], n_results=k, include=["distances"]
        )
        return [
            (str(i), similarity_from_distance(dist))
            for i, dist in zip(result["ids"][0], result["distances"][0], strict=True)
        ]

    def chunks(self, ids: Sequence[str]) -> list[KnowledgeChunk]:
        """The stored chunks of ``ids`` (unknown ids are left out)."""
        found: list[KnowledgeChunk] = []
        for start in range(0, len(ids), READ_PAGE):
            got = self._collection.get(
                ids=list(ids[start : start + READ_PAGE]), include=["documents", "metadatas"]
            )
            found.extend(
                KnowledgeChunk(id=str(i), text=d or "", metadata=dict(m or {}))
                for i, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
            )
        return found

    def query_vector(self, vector: Any, k: int) -> list[ScoredChunk]:
        """The ``min(k, count)`` nearest chunks to a query vector, best first.

        Chroma answers a ``k`` beyond the collection's size (or an empty collection) with
        what it holds, so the size is not asked for first (a round trip per query).
        """
        if k <= 0:
            return []
        result = self._collection.query(
            query_embeddings=[list(map(float, vector))],
            n_results=k,
            include=["documents", "metadatas", "distances"],
        )
        return [
            ScoredChunk(
                id=i,
                text=d or "",
                metadata=dict(m or {}),
                similarity=similarity_from_distance(dist),
            )
            for i, d, m, dist in zip(
                result["ids"][0],
                result["documents"][0],
                result["metadatas"][0],
                result["distances"][0],
                strict=True,
            )
        ]
