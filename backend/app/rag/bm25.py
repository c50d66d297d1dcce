"""The keyword index: BM25 (``bm25s``) over one collection's chunks, rebuilt as a whole.

The collection is the source of truth; this index is derived from ``VectorStore.all_chunks()``
and replaced atomically by ``rebuild`` (searches in flight keep the snapshot they started with).
It also maps canonical error codes (from each chunk's ``error_code`` metadata) to chunk ids, so a
code typed in a query finds its entry even when neither retriever ranked it, and counts the
chunks' words for spelling repair (``app.rag.spelling``).

Scoring (``Bm25Params``, set from ``EngineConfig``): the bm25s variant, k1 and b, and field
weights — a chunk's ``title`` metadata and its own ``error_code`` are indexed extra times, like a
title field weighted above the body. Every hit also carries its *coverage*: the share of the
query's word weight (idf) the chunk contains, and its *document coverage*: the share of the
chunk's own word weight the query contains — scores on a fixed 0-1 scale that the retrieval
floor can compare (``app.rag.gates``). A log line carries its template's every word plus values
and context the template does not name, so its coverage of the template can be low while the
template's coverage by the line is whole. Query tokens with a digit that the index has never seen
(ids, counters, addresses) are left out of coverage: such values differ in every incident. A
chunk that shares a single word with a longer query covers none of it: "tills down" and the
inventory entry share only "down".

Windows of long documents (``app.rag.windows``) are not indexed: BM25 scores the document they
cut, whose term counts and length are the whole text's.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

import bm25s
import numpy as np

from app.rag.ingest import KnowledgeChunk
from app.rag.spelling import Lexicon, word_counts
from app.rag.tokenize import canonical_code, tokenize
from app.rag.windows import is_window

logger = logging.getLogger(__name__)

#: Extra copies of a chunk's own ``error_code`` token (field weighting, like repeating a title):
#: an entry that merely mentions another code, as a contrast, must not outrank that code's entry.
CODE_FIELD_REPEATS = 2
#: Distinct query tokens a chunk must share for its coverage of the query to count (fewer when
#: the query has fewer).
MIN_SHARED_TOKENS = 2
#: Recent queries whose tokens and BM25 score arrays an index keeps: a request ranks the top
#: hits and then scores the other leg's candidates with the same query.
QUERY_SCORE_CACHE = 16


@dataclass(frozen=True)
class Bm25Params:
    """The BM25 variant and field weights (``RCA_BM25_*``; defaults in ``EngineConfig``)."""

    method: str = "lucene"
    k1: float = 1.2
    b: float = 0.75
    #: Times a chunk's ``title`` metadata is indexed on top of its text (0 = text only).
    title_repeats: int = 0


@dataclass(frozen=True)
class KeywordHit:
    """One chunk found by BM25."""

    chunk: KnowledgeChunk
    score: float
    #: Share (0-1) of the query's word weight found in the chunk.
    coverage: float = 0.0
    #: Share (0-1) of the chunk's own word weight found in the query (a log line that
    #: instantiates a short template holds all of the template's words).
    document_coverage: float = 0.0


@dataclass(frozen=True)
class _Snapshot:
    chunks: list[KnowledgeChunk]
    model: Any  # bm25s.BM25, or None for an empty corpus
    by_code: dict[str, list[int]] = field(default_factory=dict)
    words: Lexicon = field(default_factory=Lexicon)
    by_id: dict[str, int] = field(default_factory=dict)
    #: Per indexed chunk, the idf weight of its distinct tokens (``document_coverage``'s total).
    weights: Any = None
    #: ``query -> (tokens, BM25 score of every chunk or None)``, cached (``_query_scores``).
    scored: Any = None


def _document_tokens(chunk: KnowledgeChunk, params: Bm25Params) -> list[str]:
    code = chunk.metadata.get("error_code")
    extra = [canonical_code(str(code))] * CODE_FIELD_REPEATS if code else []
    title = chunk.metadata.get("title")
    if title and params.title_repeats > 0:
        extra += tokenize(str(title)) * params.title_repeats
    return tokenize(chunk.text) + extra


def _build(chunks: Sequence[KnowledgeChunk], params: Bm25Params) -> _Snapshot:
    chunks = [c for c in chunks if not is_window(c.metadata)]
    by_code: dict[str, list[int]] = {}
    for position, chunk in enumerate(chunks):
        code = chunk.metadata.get("error_code")
        if code:
            by_code.setdefault(canonical_code(str(code)), []).append(position)
    if not chunks:
        return _Snapshot(chunks=[], model=None, by_code=by_code)
    model = bm25s.BM25(method=params.method, k1=params.k1, b=params.b)
    model.index([_document_tokens(c, params) for c in chunks], show_progress=False)
    words = Lexicon(word_counts(c.text for c in chunks))
    by_id = {c.id: position for position, c in enumerate(chunks)}
    weights = _document_weights(model)
    scored = lru_cache(maxsize=QUERY_SCORE_CACHE)(partial(_query_scores, model))
    return _Snapshot(chunks, model, by_code, words, by_id, weights, scored)


def _query_scores(model: Any, query: str) -> tuple[tuple[str, ...], Any]:
    """The query's tokens and every chunk's BM25 score (read-only; None: no token indexed)."""
    tokens = tuple(tokenize(query))
    token_ids = model.get_tokens_ids(list(tokens))
    if not token_ids:
        return tokens, None
    scores = np.asarray(model.get_scores_from_ids(token_ids), dtype=np.float64)
    scores.setflags(write=False)
    return tokens, scores


def _idf(frequency: Any, total_docs: float) -> Any:
    """The idf that coverage weighs a token by (never negative, unlike Robertson's)."""
    return np.log(1.0 + (total_docs - frequency + 0.5) / (frequency + 0.5))


def _document_weights(model: Any) -> Any:
    """Each chunk's summed idf over its distinct tokens, from the index's token-to-chunk lists."""
    matrix = model.scores
    indptr, indices = np.asarray(matrix["indptr"]), np.asarray(matrix["indices"])
    frequency = np.diff(indptr).astype(np.float64)
    idf = _idf(frequency, float(matrix["num_docs"]))
    per_entry = np.repeat(idf, np.diff(indptr))
    return np.bincount(indices, weights=per_entry, minlength=int(matrix["num_docs"]))


class KeywordIndex:
    """BM25 over a set of chunks, with an error-code lookup."""

    def __init__(
        self, chunks: Sequence[KnowledgeChunk] = (), params: Bm25Params | None = None
    ) -> None:
        self.params = params or Bm25Params()
        self._snapshot = _build(chunks, self.params)

    def rebuild(self, chunks: Sequence[KnowledgeChunk]) -> None:
        """Replace the index with one over ``chunks`` (an atomic swap)."""
        self._snapshot = _build(chunks, self.params)
        logger.debug("keyword index rebuilt over %d chunk(s)", len(chunks))

    def __len__(self) -> int:
        """Indexed documents (windows are not indexed)."""
        return len(self._snapshot.chunks)

    def document(self, doc_id: str) -> KnowledgeChunk | None:
        """The indexed document with this id, if any."""
        snapshot = self._snapshot
        position = snapshot.by_id.get(doc_id)
        return None if position is None else snapshot.chunks[position]

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
        tokens, scores = snapshot.scored(query)
        if scores is None:
            return []
        positive = np.flatnonzero(scores > 0)
        if len(positive) > k:
            positive = positive[np.argpartition(-scores[positive], k - 1)[:k]]
        top = sorted((int(i) for i in positive), key=lambda i: (-scores[i], snapshot.chunks[i].id))
        coverage, document = _coverage(snapshot, tokens, top)
        return [
            KeywordHit(snapshot.chunks[i], float(scores[i]), coverage[n], document[n])
            for n, i in enumerate(top)
        ]

    def score_documents(self, query: str, doc_ids: Sequence[str]) -> dict[str, KeywordHit]:
        """BM25 score and coverage of ``query`` for each indexed document of ``doc_ids``.

        A document the query shares no token with scores 0. Ids that are not indexed
        documents are left out.
        """
        snapshot = self._snapshot
        positions = [snapshot.by_id[i] for i in dict.fromkeys(doc_ids) if i in snapshot.by_id]
        if snapshot.model is None or not positions:
            return {}
        tokens, scores = snapshot.scored(query)
        values = [0.0 if scores is None else float(scores[p]) for p in positions]
        coverage, document = _coverage(snapshot, tokens, positions)
        return {
            snapshot.chunks[p].id: KeywordHit(snapshot.chunks[p], value, coverage[n], document[n])
            for n, (p, value) in enumerate(zip(positions, values, strict=True))
        }

    def words(self) -> Lexicon:
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


def _coverage(
    snapshot: _Snapshot, tokens: Sequence[str], docs: Sequence[int]
) -> tuple[list[float], list[float]]:
    """Per doc of ``docs``, its coverage of the query and the query's coverage of it.

    Both are idf-weighted shares of distinct tokens: of the query's tokens the doc contains,
    and of the doc's own tokens the query contains.
    """
    model = snapshot.model
    vocab: dict[str, int] = model.vocab_dict
    matrix = model.scores
    total_docs = float(matrix["num_docs"])
    indptr, indices = matrix["indptr"], matrix["indices"]
    wanted = np.asarray(docs, dtype=np.int64)
    matched = np.zeros(len(docs), dtype=np.float64)
    shared = np.zeros(len(docs), dtype=np.int64)
    weight = 0.0
    counted = 0
    for token in dict.fromkeys(tokens):
        column = vocab.get(token)
        if column is None:
            if any(c.isdigit() for c in token):
                continue  # a value this corpus has never seen: not evidence either way
            frequency = 0.0
            holders = np.zeros(0, dtype=np.int64)
        else:
            holders = indices[indptr[column] : indptr[column + 1]]
            frequency = float(len(holders))
        idf = float(_idf(frequency, total_docs))
        weight += idf
        counted += 1
        if len(holders):
            held = np.isin(wanted, holders)
            matched += idf * held
            shared += held
    own = snapshot.weights[wanted]
    document = np.divide(matched, own, out=np.zeros_like(matched), where=own > 0)
    coverage = matched / weight if weight > 0.0 else np.zeros_like(matched)
    # One shared word is not evidence of a system: "tills down" holds a third of the inventory
    # entry's query weight through "down" alone.
    coverage[shared < min(MIN_SHARED_TOKENS, counted)] = 0.0
    return [float(v) for v in coverage], [float(min(1.0, v)) for v in document]
