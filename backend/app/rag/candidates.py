"""The engine's candidates: one per document, merged from every leg's ranking of its chunks.

A long document stored with its windows (chunks whose ``parent_id`` metadata names it, see
``app.rag.windows``) is one candidate that scores its best chunk in the dense leg; the
candidate is always the whole document (``resolve_windows``), never one of its windows. Each
leg's ranking is kept as ``(key, score)`` pairs so either fusion (rank-based RRF or score-based
z-scores) can read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.rag.bm25 import KeywordHit
from app.rag.ingest import KnowledgeChunk
from app.rag.store import ScoredChunk
from app.rag.windows import is_window, parent_of

#: A candidate's stable key across collections: ``(collection name, document id)``.
DocKey = tuple[str, str]
#: One leg's ranking for one query: (key, score), best first.
Scored = list[tuple[DocKey, float]]


@dataclass
class Candidate:
    """Everything known about one document while the rankings are merged."""

    collection: str
    id: str
    text: str
    metadata: dict[str, Any]
    dense_score: float | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    bm25_rank: int | None = None
    keyword_coverage: float | None = None
    document_coverage: float | None = None
    code_match: bool = False

    def see_dense(self, rank: int, score: float) -> None:
        """Keep the best dense rank and score across queries."""
        self.dense_rank = rank if self.dense_rank is None else min(self.dense_rank, rank)
        self.dense_score = score if self.dense_score is None else max(self.dense_score, score)

    def see_bm25(self, rank: int, hit: KeywordHit) -> None:
        """Keep the best keyword rank, score and coverage across queries."""
        self.bm25_rank = rank if self.bm25_rank is None else min(self.bm25_rank, rank)
        self.bm25_score = hit.score if self.bm25_score is None else max(self.bm25_score, hit.score)
        self.see_coverage(hit)

    def see_coverage(self, hit: KeywordHit) -> None:
        """Keep the best coverage either way (query by doc, doc by query) across queries."""
        coverage, document = self.keyword_coverage, self.document_coverage
        self.keyword_coverage = hit.coverage if coverage is None else max(coverage, hit.coverage)
        self.document_coverage = (
            hit.document_coverage if document is None else max(document, hit.document_coverage)
        )


@dataclass
class CollectionHits:
    """One collection's candidates and its rankings (dense and keyword) for every query."""

    candidates: dict[DocKey, Candidate] = field(default_factory=dict)
    dense: list[Scored] = field(default_factory=list)
    keyword: list[Scored] = field(default_factory=list)

    def candidate(self, collection: str, chunk: KnowledgeChunk | ScoredChunk) -> Candidate:
        """The candidate of ``chunk``'s document, created from this chunk when new."""
        key = (collection, parent_of(chunk))
        if key not in self.candidates:
            self.candidates[key] = Candidate(
                collection=collection, id=key[1], text=chunk.text, metadata=dict(chunk.metadata)
            )
        return self.candidates[key]

    def resolve_windows(self, document: Callable[[str], KnowledgeChunk | None]) -> None:
        """Give every candidate first seen as a window its document's text and metadata."""
        for candidate in self.candidates.values():
            if not is_window(candidate.metadata):
                continue
            whole = document(candidate.id)
            if whole is not None:
                candidate.text, candidate.metadata = whole.text, dict(whole.metadata)

    def add_dense(self, collection: str, chunks: list[ScoredChunk], documents: int) -> None:
        """One query's dense ranking of chunks, as its best ``documents`` documents.

        Windows make the chunk list longer than the document list it stands for; cutting at
        ``documents`` keeps each ranking as long as the keyword leg's, so score fusion
        (z-scores over each list) means the same whether or not a corpus has windows.
        """
        ranking: Scored = []
        seen: set[DocKey] = set()
        for chunk in chunks:
            key = (collection, parent_of(chunk))
            if key in seen:
                continue
            if len(ranking) == documents:
                break
            seen.add(key)
            ranking.append((key, chunk.similarity))
            self.candidate(collection, chunk).see_dense(len(ranking), chunk.similarity)
        self.dense.append(ranking)

    def add_keyword(self, collection: str, hits: list[KeywordHit]) -> None:
        """One query's keyword ranking of chunks, as documents (each at its best window)."""
        ranking: Scored = []
        seen: set[DocKey] = set()
        for hit in hits:
            key = (collection, parent_of(hit.chunk))
            if key in seen:
                continue
            seen.add(key)
            ranking.append((key, hit.score))
            self.candidate(collection, hit.chunk).see_bm25(len(ranking), hit)
        self.keyword.append(ranking)
