"""The vector store: a Chroma collection of knowledge chunks, queried by our own embeddings.

Every collection call passes our embedding function, so Chroma never builds its stock one.
``similarity = clamp(1 - cosine distance, 0, 1)``: a display approximation, not a probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import chromadb
from chromadb.api import ClientAPI

from app.core.config import Settings
from app.rag.embedding import ChromaEmbeddingFunction, Embedder
from app.rag.ingest import KnowledgeChunk


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


class VectorStore:
    """One Chroma collection, embedded with the project's embedder."""

    def __init__(self, client: ClientAPI, embedder: Embedder, collection_name: str) -> None:
        self.client = client
        self.embedder = embedder
        self.collection_name = collection_name
        self._function = ChromaEmbeddingFunction(embedder)
        self._collection = self._get_or_create()

    def _get_or_create(self) -> Any:
        return self.client.get_or_create_collection(
            name=self.collection_name,
            embedding_function=self._function,  # type: ignore[arg-type]
            metadata={"hnsw:space": "cosine", "embedding_model": self.embedder.model_id},
        )

    def reset(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Drop the collection and rebuild it from ``chunks`` (the source file is the truth)."""
        existing = {c.name for c in self.client.list_collections()}
        if self.collection_name in existing:
            self.client.delete_collection(self.collection_name)
        self._collection = self._get_or_create()
        self.add(chunks)

    def add(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Embed and add chunks (ids must be new)."""
        if not chunks:
            return
        vectors = self.embedder.embed_documents([c.text for c in chunks])
        self._collection.add(
            ids=[c.id for c in chunks],
            documents=[c.text for c in chunks],
            metadatas=[dict(c.metadata) for c in chunks],
            embeddings=list(vectors),
        )

    def count(self) -> int:
        """Number of stored chunks."""
        return int(self._collection.count())

    def all_chunks(self) -> list[KnowledgeChunk]:
        """Every stored chunk (for keyword indexes kept in sync with the collection)."""
        got = self._collection.get(include=["documents", "metadatas"])
        return [
            KnowledgeChunk(id=i, text=d or "", metadata=dict(m or {}))
            for i, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        ]

    def query(self, text: str, k: int) -> list[ScoredChunk]:
        """The ``min(k, count)`` nearest chunks to ``text``, best first."""
        return self.query_vector(self.embedder.embed_query(text), k)

    def query_vector(self, vector: Any, k: int) -> list[ScoredChunk]:
        """The ``min(k, count)`` nearest chunks to a query vector, best first."""
        n = min(k, self.count())
        if n <= 0:
            return []
        result = self._collection.query(
            query_embeddings=[list(map(float, vector))],
            n_results=n,
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
