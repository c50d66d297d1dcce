"""The keyword index: BM25 (``bm25s``) over one collection's chunks, rebuilt as a whole.

The collection is the source of truth; this index is derived from ``VectorStore.all_chunks()``
and replaced atomically by ``rebuild`` (searches in flight keep the snapshot they started with).
It also maps canonical error codes (from each chunk's ``error_code`` metadata) to chunk ids, so a
code typed in a query finds its entry even when neither retriever ranked it, and counts the
chunks' words for spelling repair (``app.rag.spelling``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import bm25s
import numpy as np

from app.rag.ingest import KnowledgeChunk
from app.rag.spelling import word_counts
from app.rag.tokenize import canonical_code, tokenize

logger = logging.getLogger(__name__)

#: Lucene BM25 with the classic parameters; SciFact tuning (k1 1.2, b 0.9) gained < 0.01 nDCG.
BM25_METHOD = "lucene"
BM25_K1 = 1.2
BM25_B = 0.75
#: Extra copies of a chunk's own ``error_code`` token (field weighting, like repeating a title):
#: an entry that merely mentions another code, as a contrast, must not outrank that code's entry.
CODE_FIELD_REPEATS = 2


@dataclass(frozen=True)
class KeywordHit:
    """One chunk found by BM25."""

    chunk: KnowledgeChunk
    score: float


@dataclass(frozen=True)
class _Snapshot:
    chunks: list[KnowledgeChunk]
    model: Any  # bm25s.BM25, or None for an empty corpus
    by_code: dict[str, list[int]] = field(default_factory=dict)
    words: Counter[str] = field(default_factory=Counter)


def _document_tokens(chunk: KnowledgeChunk) -> list[str]:
    code = chunk.metadata.get("error_code")
    extra = [canonical_code(str(code))] * CODE_FIELD_REPEATS if code else []
    return tokenize(chunk.text) + extra


def _build(chunks: Sequence[KnowledgeChunk]) -> _Snapshot:
    chunks = list(chunks)
    by_code: dict[str, list[int]] = {}
    for position, chunk in enumerate(chunks):
        code = chunk.metadata.get("error_code")
        if code:
            by_code.setdefault(canonical_code(str(code)), []).append(position)
    if not chunks:
        return _Snapshot(chunks=[], model=None, by_code=by_code)
    model = bm25s.BM25(method=BM25_METHOD, k1=BM25_K1, b=BM25_B)
    model.index([_document_tokens(c) for c in chunks], show_progress=False)
    words = word_counts(c.text for c in chunks)
    return _Snapshot(chunks=chunks, model=model, by_code=by_code, words=words)


class KeywordIndex:
    """BM25 over a set of chunks, with an error-code lookup."""

    def __init__(self, chunks: Sequence[KnowledgeChunk] = ()) -> None:
        self._snapshot = _build(chunks)

    def rebuild(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Replace the index with one over ``chunks`` (an atomic swap)."""
        self._snapshot = _build(chunks)
        logger.debug("keyword index rebuilt over %d chunk(s)", len(chunks))

    def __len__(self) -> int:
        return len(self._snapshot.chunks)

    def search(self, query: str, k: int) -> list[KeywordHit]:
        """The best ``k`` chunks with a positive BM25 score, best first (ties by chunk id).

        Args:
            query: Free text; tokenised like the documents.
            k: Maximum number of hits.

        Returns:
            Hits in rank order; empty when no query token is in the index.
        """
        snapshot = self._snapshot
        if snapshot.model is None or k <= 0:
            return []
        token_ids = snapshot.model.get_tokens_ids(tokenize(query))
        if not token_ids:
            return []
        scores = np.asarray(snapshot.model.get_scores_from_ids(token_ids), dtype=np.float64)
        positive = [int(i) for i in np.flatnonzero(scores > 0)]
        positive.sort(key=lambda i: (-scores[i], snapshot.chunks[i].id))
        return [KeywordHit(snapshot.chunks[i], float(scores[i])) for i in positive[:k]]

    def words(self) -> Mapping[str, int]:
        """Lower-case words of the indexed chunks with their counts."""
        return self._snapshot.words

    def with_codes(self, codes: Sequence[str]) -> list[KnowledgeChunk]:
        """Chunks whose ``error_code`` metadata equals one of the canonical ``codes``."""
        snapshot = self._snapshot
        seen: set[int] = set()
        out: list[KnowledgeChunk] = []
        for code in codes:
            for position in snapshot.by_code.get(code, []):
                if position not in seen:
                    seen.add(position)
                    out.append(snapshot.chunks[position])
        return out
