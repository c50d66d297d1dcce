"""The retrieval engine's contract and its dense baseline.

Every retriever returns a ``Retrieval``: ranked docs that each know why they ranked (dense and
keyword ranks and scores, fused score, error-code match, rerank score) and a ``low_confidence``
flag that is true exactly when no candidate survived the gates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from app.rag.store import VectorStore


@dataclass(frozen=True)
class RankedDoc:
    """One retrieved chunk with everything that explains its rank."""

    id: str
    text: str
    metadata: dict[str, Any]
    collection: str
    dense_score: float | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    bm25_rank: int | None = None
    fused_score: float | None = None
    code_match: bool = False
    rerank_score: float | None = None
    #: Share (0-1) of the query's word weight the doc contains; None when BM25 did not find it.
    keyword_coverage: float | None = None
    #: Share (0-1) of the doc's own word weight the query contains; None when BM25 did not score it.
    document_coverage: float | None = None

    @property
    def similarity(self) -> float:
        """Dense cosine similarity clamped to [0, 1]; 0.0 when only keywords found it."""
        return self.dense_score if self.dense_score is not None else 0.0

    def explanation(self) -> dict[str, Any]:
        """Why this doc ranked, as plain data for the API and the UI."""
        return {
            "dense_rank": self.dense_rank,
            "dense_score": self.dense_score,
            "bm25_rank": self.bm25_rank,
            "bm25_score": self.bm25_score,
            "fused_score": self.fused_score,
            "code_match": self.code_match,
            "rerank_score": self.rerank_score,
        }

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form."""
        return asdict(self)


@dataclass(frozen=True)
class Retrieval:
    """The outcome of one retrieval."""

    query: str
    docs: list[RankedDoc]
    low_confidence: bool
    queries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: True when a reranker was configured but failed, so the docs are in fusion order.
    rerank_fallback: bool = False


class Retriever(Protocol):
    """Finds the knowledge most similar to a query."""

    def retrieve(self, query: str, limit: int) -> Retrieval:
        """The best ``limit`` docs for ``query`` after all gates."""
        ...


class DenseRetriever:
    """Dense-only retrieval over one vector store, with no gates (the A1 baseline)."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    def retrieve(self, query: str, limit: int) -> Retrieval:
        """Nearest chunks by cosine similarity."""
        hits = self.store.query(query, limit)
        docs = [
            RankedDoc(
                id=h.id,
                text=h.text,
                metadata=h.metadata,
                collection=self.store.collection_name,
                dense_score=h.similarity,
                dense_rank=rank,
                fused_score=h.similarity,
            )
            for rank, h in enumerate(hits, start=1)
        ]
        return Retrieval(query=query, docs=docs, low_confidence=not docs, queries=[query])
