"""The retrieval engine: hybrid recall, fusion, gates, rerank and budgeted context in one place.

One request runs these steps:

1. validate the query (blank or too long -> ``ValidationFailed``);
2. expand it (``QueryRewriter``; default none) -- the original query is always first; when
   it has misspelt words, search with them repaired against the knowledge base's words in its
   place (``app.rag.spelling``; on by default, offline; the repairs are listed in ``notes``);
3. per collection (several collections concurrently, in threads -- Chroma calls are sync):
   dense top-k from Chroma and BM25 top-k for every query, plus the chunks whose ``error_code``
   metadata matches a code typed in the original query;
4. fuse every ranking with reciprocal rank fusion on ``(collection, chunk id)``; an exact
   error-code match adds ``code_match_boost``; ties go to the higher dense score, then the higher
   BM25 score, then the id;
5. the retrieval floor on dense cosine similarity (code matches exempt) -- see ``gates``;
6. rerank (``Reranker``; default none) and the confidence threshold on rerank scores; a failed
   rerank keeps fusion order and says so (``rerank_fallback`` and a note);
7. keep ``limit`` docs; ``low_confidence`` is true exactly when none survived.

``pack_context`` then fits the ranked docs into a budget chosen from the original query.
The keyword index of each collection is derived state: ``refresh()`` rebuilds the base index and
the engine also rebuilds any index whose collection changed size since it was built.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

from app.core.config import Settings
from app.core.errors import AppError, NotFound, UpstreamError, ValidationFailed
from app.rag.bm25 import KeywordIndex
from app.rag.embedding import TOKENIZER_PATH
from app.rag.fusion import order_by_fused, reciprocal_rank_fusion
from app.rag.gates import apply_confidence, apply_floor
from app.rag.ingest import KnowledgeChunk
from app.rag.knowledge import KnowledgeBase
from app.rag.packing import Budgets, PackedContext, classify_complexity, pack_context
from app.rag.rerank import Reranker, build_reranker, rerank_permutation
from app.rag.retrieve import RankedDoc, Retrieval
from app.rag.rewrite import QueryRewriter
from app.rag.spelling import model_words, repair_spelling
from app.rag.store import ScoredChunk, VectorStore
from app.rag.tokenize import canonical_code, find_codes

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: A candidate's stable key across collections: ``(collection name, chunk id)``.
DocKey = tuple[str, str]


@dataclass(frozen=True)
class EngineConfig:
    """The engine's knobs (``Settings`` fields of the same meaning, see ``.env.example``)."""

    rrf_k: int = 60
    candidates: int = 50
    score_floor: float = 0.35
    code_match_boost: float = 1.0
    confidence_threshold: float = 0.5
    budgets: Budgets = field(default_factory=Budgets)
    query_max_chars: int = 2000
    default_limit: int = 15
    spelling_repair: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> EngineConfig:
        """The configuration the settings describe."""
        return cls(
            rrf_k=settings.rrf_k,
            candidates=settings.retrieve_candidates,
            score_floor=settings.score_floor,
            code_match_boost=settings.code_match_boost,
            confidence_threshold=settings.confidence_threshold,
            budgets=Budgets(
                simple=settings.budget_simple,
                medium=settings.budget_medium,
                complex=settings.budget_complex,
            ),
            query_max_chars=settings.query_max_chars,
            default_limit=settings.retrieve_default_limit,
            spelling_repair=settings.spelling_repair,
        )


@dataclass
class _Candidate:
    """Everything known about one doc while the rankings are merged."""

    collection: str
    id: str
    text: str
    metadata: dict[str, Any]
    dense_score: float | None = None
    dense_rank: int | None = None
    bm25_score: float | None = None
    bm25_rank: int | None = None
    code_match: bool = False

    def see_dense(self, rank: int, score: float) -> None:
        # Across several queries a doc keeps its best rank and best score.
        self.dense_rank = rank if self.dense_rank is None else min(self.dense_rank, rank)
        self.dense_score = score if self.dense_score is None else max(self.dense_score, score)

    def see_bm25(self, rank: int, score: float) -> None:
        self.bm25_rank = rank if self.bm25_rank is None else min(self.bm25_rank, rank)
        self.bm25_score = score if self.bm25_score is None else max(self.bm25_score, score)


@dataclass
class _CollectionHits:
    """One collection's rankings for every query."""

    candidates: dict[DocKey, _Candidate] = field(default_factory=dict)
    rankings: list[list[DocKey]] = field(default_factory=list)

    def candidate(self, collection: str, chunk: KnowledgeChunk | ScoredChunk) -> _Candidate:
        key = (collection, chunk.id)
        if key not in self.candidates:
            self.candidates[key] = _Candidate(
                collection=collection, id=chunk.id, text=chunk.text, metadata=dict(chunk.metadata)
            )
        return self.candidates[key]


def _upstream(what: str, call: Callable[[], T]) -> T:
    """Run a vector-store or model call; wrap any failure as ``UpstreamError``."""
    try:
        return call()
    except AppError:
        raise
    except Exception as exc:
        logger.exception("%s failed", what)
        raise UpstreamError(f"{what} failed; try again later") from exc


class RetrievalEngine:
    """Hybrid, gated, budgeted retrieval over the knowledge base and other collections."""

    def __init__(
        self,
        store: VectorStore,
        config: EngineConfig | None = None,
        *,
        reranker: Reranker | None = None,
        rewriter: QueryRewriter | None = None,
        max_workers: int = 4,
    ) -> None:
        """Build the engine over the knowledge-base ``store`` and index it.

        Args:
            store: The base (knowledge-base) collection; other collections share its client
                and embedder.
            config: Fusion, gate and budget settings (defaults: ``EngineConfig()``).
            reranker: Optional second-stage scorer; none keeps fusion order.
            rewriter: Optional query expansion; none searches the query as given.
            max_workers: Threads used to search several collections at once.
        """
        self.store = store
        self.config = config or EngineConfig()
        self.reranker = reranker
        self.rewriter = rewriter
        self._indexes: dict[str, tuple[object, KeywordIndex]] = {}
        self._index_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="retrieval")
        self.refresh()

    @property
    def collection_name(self) -> str:
        """The base (knowledge-base) collection's name."""
        return self.store.collection_name

    def close(self) -> None:
        """Release the worker threads and the reranker's connections."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        for resource in (self.reranker, self.rewriter):
            close = getattr(resource, "close", None)
            if callable(close):
                close()

    # -- keyword indexes -------------------------------------------------------------------

    def refresh(self) -> None:
        """Rebuild the base BM25 index from the collection; call after every (re)ingest.

        Other collections' indexes are dropped and rebuilt on their next search.
        """
        chunks = _upstream("reading the knowledge collection", self.store.all_chunks)
        index = KeywordIndex(chunks)
        with self._index_lock:
            self._indexes = {self.store.collection_name: ((None, len(chunks)), index)}
        logger.info("keyword index built over %d chunk(s)", len(chunks))

    def _keyword_index(self, store: VectorStore, collection_id: object = None) -> KeywordIndex:
        """The collection's BM25 index, rebuilt when the collection changed since it was built."""
        count = _upstream("counting the collection", store.count)
        fingerprint = (collection_id, count)
        with self._index_lock:
            cached = self._indexes.get(store.collection_name)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        chunks = _upstream("reading the collection", store.all_chunks)
        index = KeywordIndex(chunks)
        with self._index_lock:
            self._indexes[store.collection_name] = ((collection_id, len(chunks)), index)
        return index

    def _base_words(self) -> Mapping[str, int]:
        """The knowledge base's words as its index was last built; no store call per request."""
        with self._index_lock:
            return self._indexes[self.store.collection_name][1].words()

    # -- public API ------------------------------------------------------------------------

    def retrieve(self, query: str, limit: int) -> Retrieval:
        """The best ``limit`` knowledge-base docs for ``query`` after every gate.

        Args:
            query: Free text (an incident summary, an error code, a question).
            limit: Maximum number of docs returned.

        Returns:
            The ranked, gated docs; ``low_confidence`` when none survived.

        Raises:
            ValidationFailed: The query is blank or too long, or ``limit`` < 1.
            UpstreamError: The vector store or embedder failed.
        """
        return self._run(query, [(self.store, None)], limit, notes=[])

    def retrieve_collections(
        self, query: str, collection_names: Sequence[str], limit: int
    ) -> Retrieval:
        """Like ``retrieve`` over several collections searched concurrently.

        Only the collections that exist are searched; the others are named in ``notes``.

        Args:
            query: Free text.
            collection_names: Collections to search (e.g. base, then a per-user one).
            limit: Maximum number of docs returned in total.

        Returns:
            The ranked, gated docs of all searched collections fused together.

        Raises:
            ValidationFailed: The query is blank or too long, or ``limit`` < 1.
            NotFound: None of the collections exists.
            UpstreamError: The vector store or embedder failed.
        """
        self._validate(query, limit)
        names = list(dict.fromkeys(n for n in collection_names if n))
        existing = _upstream("listing collections", self._existing_collections)
        present = [n for n in names if n in existing]
        if not present:
            raise NotFound("none of the requested collections exists")
        notes = [f"collection '{n}' does not exist; skipped" for n in names if n not in existing]
        # The base index is kept in sync by ``refresh()`` and its size; others by id and size.
        targets = [
            (self._store_for(n), None if n == self.store.collection_name else existing[n])
            for n in present
        ]
        return self._run(query, targets, limit, notes=notes)

    def pack_context(self, query: str, docs: Sequence[RankedDoc]) -> PackedContext:
        """Fit ranked docs into the token budget that the original ``query`` deserves."""
        complexity = classify_complexity(query)
        return pack_context(docs, self.config.budgets.tokens(complexity), complexity)

    # -- the pipeline ----------------------------------------------------------------------

    def _validate(self, query: str, limit: int) -> None:
        if not query or not query.strip():
            raise ValidationFailed("query must not be empty")
        if len(query) > self.config.query_max_chars:
            raise ValidationFailed(f"query is longer than {self.config.query_max_chars} characters")
        if limit < 1:
            raise ValidationFailed("limit must be at least 1")

    def _existing_collections(self) -> dict[str, object]:
        return {c.name: c.id for c in self.store.client.list_collections()}

    def _store_for(self, name: str) -> VectorStore:
        if name == self.store.collection_name:
            return self.store
        client, embedder = self.store.client, self.store.embedder
        return _upstream("opening a collection", lambda: VectorStore(client, embedder, name))

    def _run(
        self,
        query: str,
        targets: Sequence[tuple[VectorStore, object]],
        limit: int,
        notes: list[str],
    ) -> Retrieval:
        self._validate(query, limit)
        queries = [query]
        if self.rewriter is not None:
            expansion = self.rewriter.expand(query)
            queries = expansion.queries or [query]
            notes = notes + expansion.notes
        if self.config.spelling_repair:
            repair = repair_spelling(query, self._base_words(), model_words(TOKENIZER_PATH))
            if repair is not None:
                # Like a search engine's "showing results for": the misspelt words match
                # nothing in BM25 and only noise for the embedder, so they are not searched.
                queries = list(dict.fromkeys(repair.text if q == query else q for q in queries))
                changed = ", ".join(f"{typed} -> {fixed}" for typed, fixed in repair.changes)
                notes = [*notes, f"searched with spelling repaired: {changed}"]
        embedder = self.store.embedder
        vectors = _upstream(
            "embedding the query", lambda: [embedder.embed_query(q) for q in queries]
        )
        codes = find_codes(query)
        depth = max(limit, self.config.candidates)

        def search(target: tuple[VectorStore, object]) -> _CollectionHits:
            store, collection_id = target
            return self._search_collection(store, collection_id, queries, vectors, codes, depth)

        if len(targets) == 1:
            per_collection = [search(targets[0])]
        else:
            per_collection = list(self._pool.map(search, targets))

        ranked = self._fuse(per_collection)
        survivors = apply_floor(ranked, self.config.score_floor)
        survivors, rerank_fallback, rerank_notes = self._rerank(query, survivors)
        docs = survivors[:limit]
        return Retrieval(
            query=query,
            docs=docs,
            low_confidence=not docs,
            queries=queries,
            notes=notes + rerank_notes,
            rerank_fallback=rerank_fallback,
        )

    def _search_collection(
        self,
        store: VectorStore,
        collection_id: object,
        queries: Sequence[str],
        vectors: Sequence[Any],
        codes: Sequence[str],
        depth: int,
    ) -> _CollectionHits:
        name = store.collection_name
        hits = _CollectionHits()
        index = self._keyword_index(store, collection_id)
        for query, vector in zip(queries, vectors, strict=True):
            dense: list[ScoredChunk] = _upstream(
                "searching the vector store",
                partial(store.query_vector, vector, depth),
            )
            ranking: list[DocKey] = []
            for rank, chunk in enumerate(dense, start=1):
                hits.candidate(name, chunk).see_dense(rank, chunk.similarity)
                ranking.append((name, chunk.id))
            hits.rankings.append(ranking)
            ranking = []
            for rank, hit in enumerate(index.search(query, depth), start=1):
                hits.candidate(name, hit.chunk).see_bm25(rank, hit.score)
                ranking.append((name, hit.chunk.id))
            hits.rankings.append(ranking)
        for coded in index.with_codes(codes):
            hits.candidate(name, coded).code_match = True
        for candidate in hits.candidates.values():
            code = candidate.metadata.get("error_code")
            if code and canonical_code(str(code)) in codes:
                candidate.code_match = True
        return hits

    def _fuse(self, per_collection: Iterable[_CollectionHits]) -> list[RankedDoc]:
        candidates: dict[DocKey, _Candidate] = {}
        rankings: list[list[DocKey]] = []
        for hits in per_collection:
            candidates.update(hits.candidates)
            rankings.extend(hits.rankings)
        fused = reciprocal_rank_fusion(rankings, self.config.rrf_k)
        for key, candidate in candidates.items():
            fused.setdefault(key, 0.0)
            if candidate.code_match:
                fused[key] += self.config.code_match_boost
        order = order_by_fused(
            fused,
            tie_scores={
                k: (c.dense_score or 0.0, c.bm25_score or 0.0) for k, c in candidates.items()
            },
            tie_ids={k: f"{k[1]}\x00{k[0]}" for k in candidates},
        )
        return [
            RankedDoc(
                id=c.id,
                text=c.text,
                metadata=c.metadata,
                collection=c.collection,
                dense_score=c.dense_score,
                dense_rank=c.dense_rank,
                bm25_score=c.bm25_score,
                bm25_rank=c.bm25_rank,
                fused_score=fused[key],
                code_match=c.code_match,
            )
            for key in order
            for c in (candidates[key],)
        ]

    def _rerank(self, query: str, docs: list[RankedDoc]) -> tuple[list[RankedDoc], bool, list[str]]:
        """Rerank and apply the confidence threshold; on failure keep fusion order."""
        if self.reranker is None or not docs:
            return docs, False, []
        try:
            scores = self.reranker.rerank(query, [d.text for d in docs])
        except Exception as exc:  # best effort by design: any rerank failure keeps fusion order
            logger.warning("rerank failed, keeping fusion order: %s", exc)
            return docs, True, ["reranker unavailable; results are in fusion order"]
        order, by_index = rerank_permutation(len(docs), scores)
        ranked = [replace(docs[i], rerank_score=by_index.get(i)) for i in order]
        return apply_confidence(ranked, self.config.confidence_threshold), False, []


def build_retrieval_engine(
    settings: Settings,
    knowledge: KnowledgeBase,
    reranker: Reranker | None = None,
    rewriter: QueryRewriter | None = None,
) -> RetrievalEngine:
    """The engine the settings describe, over the loaded knowledge base.

    Args:
        settings: Fusion, gate, rerank and budget settings.
        knowledge: The ingested knowledge base (its store is the base collection).
        reranker: A reranker to use; ``None`` builds the HTTP one when ``rerank_url`` is set.
        rewriter: A query rewriter (e.g. ``LlmQueryRewriter`` over the chat model); none by default.

    Returns:
        A ready engine whose keyword index matches the collection.
    """
    return RetrievalEngine(
        knowledge.store,
        EngineConfig.from_settings(settings),
        reranker=reranker if reranker is not None else build_reranker(settings),
        rewriter=rewriter,
    )
