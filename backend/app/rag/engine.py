"""The retrieval engine: hybrid recall, fusion, gates, rerank and budgeted context in one place.

One request runs these steps:

1. validate the query (blank -> ``ValidationFailed``); a query longer than ``query_max_chars`` is
   cut there and searched, with a note (the HTTP schemas still reject client input over 2000
   characters; see ``app.api.retrieval_schemas``);
2. expand it (``QueryRewriter``; default none) -- the original query is always first; with
   ``spelling_repair`` on, misspelt words are repaired against the knowledge base's words
   (``app.rag.spelling``; the repairs are listed in ``notes``);
3. per collection (several collections concurrently, in threads -- Chroma calls are sync): the
   legs (``legs``: dense top-k from Chroma and BM25 top-k, or one of them) for every query, plus the
   chunks whose ``error_code`` metadata matches a code typed in the original query. A long
   document stored with its windows (``app.rag.windows``) is one candidate: the dense leg scores
   its best chunk, BM25 the whole text, and the candidate carries the whole document. Chroma
   answers the dense leg with ids and distances only; the documents come from the keyword index,
   which holds them all (a chunk written since it was built is read from the store);
4. fuse (``fusion``: reciprocal rank fusion, or a weighted z-score blend with ``dense_weight``)
   on ``(collection, document id)``; under z-scores a leg's list counts a candidate it did not
   rank at that leg's own score of it (its best chunk's cosine, its BM25 score; with
   ``zscore_unranked="lowest"``, at the list's lowest score); for each code the query names
   exactly, the best-fused doc with that code gets ``code_match_boost`` times the spread of the
   fused scores (so the boost means the same under either fusion, and one code never floods the
   top with same-tag docs);
   ties go to the higher dense score, then the higher BM25 score, then the id;
5. the retrieval floor on each doc's evidence, dense similarity or keyword coverage (code
   matches exempt) -- see ``gates``; docs only BM25 found get their dense similarity computed
   from their stored vectors (best chunk), so the floor never reads a missing score as zero;
6. rerank (``Reranker``; default none) and the confidence threshold on rerank scores; a failed
   rerank keeps fusion order and says so (``rerank_fallback`` and a note);
7. keep ``limit`` docs; ``low_confidence`` is true exactly when none survived.

With ``prf_docs`` > 0 (pseudo-relevance feedback), steps 3-4 run twice: each query vector moves
toward the best chunks of the first pass's top docs and the collections are searched again.

``pack_context`` then fits the ranked docs into a budget chosen from the original query.
The keyword index of each collection, with the chunk vectors read so far, is derived state:
``refresh()`` rebuilds the base index and the engine also rebuilds any index whose collection
changed size since it was built.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

import numpy as np

from app.core.config import Settings
from app.core.errors import AppError, NotFound, UpstreamError, ValidationFailed
from app.rag.bm25 import KeywordIndex
from app.rag.candidates import Candidate, CollectionHits, DocKey, Scored
from app.rag.embedding import TOKENIZER_PATH
from app.rag.engine_config import EngineConfig
from app.rag.fusion import order_by_fused, reciprocal_rank_fusion, zscore_fusion
from app.rag.gates import apply_confidence, apply_floor, clear_lead, evidence
from app.rag.ingest import KnowledgeChunk
from app.rag.knowledge import KnowledgeBase
from app.rag.packing import PackedContext, classify_complexity, pack_context
from app.rag.rerank import Reranker, build_reranker, rerank_permutation
from app.rag.retrieve import RankedDoc, Retrieval
from app.rag.rewrite import QueryRewriter
from app.rag.services import ServiceCatalogue
from app.rag.spelling import Lexicon, model_words, repair_spelling
from app.rag.store import ScoredChunk, VectorStore
from app.rag.tokenize import canonical_code, find_codes
from app.rag.windows import is_window, parent_of

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: How often (at most) the base collection's size is checked against its keyword index.
BASE_RECOUNT_SECONDS = 1.0
#: Documents whose chunk vectors an index keeps after reading them (oldest dropped first).
VECTOR_CACHE_DOCUMENTS = 20_000


@dataclass(frozen=True)
class _Index:
    """A collection's derived state as of one fingerprint.

    That is its keyword index, its chunks per document and the chunk vectors read so far. The
    vectors are as fresh as the keyword index: both are rebuilt when the fingerprint changes
    or ``refresh()`` runs (knowledge-base ids are content hashes, so an edit is a new id).
    """

    fingerprint: tuple[object, int]
    keywords: KeywordIndex
    fanout: int
    #: Window id -> its document's id (windows are not in the keyword index).
    parents: dict[str, str] = field(default_factory=dict)
    vectors: dict[str, Any] = field(default_factory=dict)
    vectors_lock: threading.Lock = field(default_factory=threading.Lock)


def _fanout(chunks: Sequence[Any]) -> int:
    """Chunks per document (rounded up): how much deeper to read a leg to get ``k`` documents."""
    documents = len({parent_of(c) for c in chunks})
    return max(1, math.ceil(len(chunks) / documents)) if documents else 1


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
        self._indexes: dict[str, _Index] = {}
        self._base_counted = -math.inf
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
        self.services = ServiceCatalogue.from_chunks(c for c in chunks if not is_window(c.metadata))
        index = self._build_index(chunks, None)
        with self._index_lock:
            self._indexes = {self.store.collection_name: index}
            self._base_counted = time.monotonic()
        logger.info("keyword index built over %d chunk(s)", len(chunks))

    def _build_index(self, chunks: Sequence[Any], collection_id: object) -> _Index:
        keywords = KeywordIndex(chunks, self.config.bm25)
        parents = {c.id: parent_of(c) for c in chunks if is_window(c.metadata)}
        return _Index((collection_id, len(chunks)), keywords, _fanout(chunks), parents)

    def _keyword_index(self, store: VectorStore, collection_id: object = None) -> _Index:
        """The collection's BM25 index, rebuilt when the collection changed since it was built.

        The base collection is re-counted at most every ``BASE_RECOUNT_SECONDS``: this process
        writes it only through ingests that call ``refresh()``, and a count per request (a
        Chroma round trip) was a visible share of a request's time under load. Other workers'
        ingests are still seen within that interval.
        """
        base = store.collection_name == self.store.collection_name and collection_id is None
        now = time.monotonic()
        with self._index_lock:
            cached = self._indexes.get(store.collection_name)
            if base and cached is not None and now - self._base_counted < BASE_RECOUNT_SECONDS:
                return cached
        count = _upstream("counting the collection", store.count)
        if base:
            self._base_counted = now
        if cached is not None and cached.fingerprint == (collection_id, count):
            return cached
        chunks = _upstream("reading the collection", store.all_chunks)
        index = self._build_index(chunks, collection_id)
        with self._index_lock:
            self._indexes[store.collection_name] = index
        return index

    def _base_words(self) -> Lexicon:
        """The knowledge base's words as its index was last built; no store call per request."""
        with self._index_lock:
            return self._indexes[self.store.collection_name].keywords.words()

    # -- public API ------------------------------------------------------------------------

    def retrieve(self, query: str, limit: int) -> Retrieval:
        """The best ``limit`` knowledge-base docs for ``query`` after every gate.

        Args:
            query: Free text (an incident summary, an error code, a question).
            limit: Maximum number of docs returned.

        Returns:
            The ranked, gated docs; ``low_confidence`` when none survived.

        Raises:
            ValidationFailed: The query is blank, or ``limit`` < 1.
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
            ValidationFailed: The query is blank, or ``limit`` < 1.
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
        cap = self.config.query_max_chars
        if len(query) > cap:
            # A long log line is still evidence: search its head rather than refuse it.
            query = query[:cap]
            notes = [*notes, f"query cut to its first {cap} characters"]
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

        def search(vectors: Sequence[Any]) -> list[CollectionHits]:
            def one(target: tuple[VectorStore, object]) -> CollectionHits:
                store, collection_id = target
                return self._search_collection(store, collection_id, queries, vectors, codes, depth)

            if len(targets) == 1:
                return [one(targets[0])]
            return list(self._pool.map(one, targets))

        per_collection = search(vectors)
        if self.config.prf_docs > 0 and self.config.legs != "keyword":
            expanded = self._feedback_vectors(targets, per_collection, vectors, codes)
            if expanded is not None:
                per_collection = search(expanded)

        ranked = self._fuse(per_collection, codes)
        survivors, notes = self._floored(ranked, notes)
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

    def _floored(
        self, ranked: list[RankedDoc], notes: list[str]
    ) -> tuple[list[RankedDoc], list[str]]:
        """The docs that clear the floor; else the one clear lead under it, with a note."""
        config = self.config
        survivors = apply_floor(ranked, config.score_floor)
        if survivors:
            return survivors, notes
        lead = clear_lead(
            ranked,
            floor=config.score_floor,
            lead_floor=config.lead_floor,
            margin=config.lead_margin,
        )
        if lead is None:
            return [], notes
        note = (
            f"no doc reached the floor {config.score_floor:.2f}; {lead.id} is kept: its evidence "
            f"{evidence(lead):.2f} leads every other family's by at least {config.lead_margin:.2f}"
        )
        return [lead], [*notes, note]

    def _feedback_vectors(
        self,
        targets: Sequence[tuple[VectorStore, object]],
        first: Sequence[CollectionHits],
        vectors: Sequence[Any],
        codes: Sequence[str],
    ) -> list[Any] | None:
        """Pseudo-relevance feedback: each query vector moved toward the first pass's best docs.

        The ``prf_docs`` best fused docs that pass the floor lend their best-matching chunk
        (Rocchio on embeddings); the dense leg is then searched again with
        ``normalise(q + prf_weight * mean(chunks))``. None when no doc passed the floor.
        """
        top = apply_floor(self._fuse(first, codes), self.config.score_floor)
        top = top[: self.config.prf_docs]
        if not top:
            return None
        queries = np.asarray(vectors, dtype=np.float32)
        family: dict[tuple[str, str], Any] = {}
        for store, collection_id in targets:
            ids = [d.id for d in top if d.collection == store.collection_name]
            if ids:
                index = self._keyword_index(store, collection_id)
                read = self._document_vectors(store, index, ids)
                family.update(((store.collection_name, i), v) for i, v in read.items())
        picked = [
            chunks[int(np.argmax(chunks @ queries[0]))]
            for doc in top
            if (chunks := family.get((doc.collection, doc.id))) is not None
        ]
        if not picked:
            return None
        moved = queries + self.config.prf_weight * np.mean(picked, axis=0)
        norms = np.linalg.norm(moved, axis=1, keepdims=True)
        return list(moved / np.where(norms > 0, norms, 1.0))

    def _search_collection(
        self,
        store: VectorStore,
        collection_id: object,
        queries: Sequence[str],
        vectors: Sequence[Any],
        codes: Sequence[str],
        depth: int,
    ) -> CollectionHits:
        name = store.collection_name
        hits = CollectionHits()
        index = self._keyword_index(store, collection_id)
        legs = self.config.legs
        # Windows of one document share a leg's list; read deeper to still find ``depth`` docs.
        chunk_depth = depth * index.fanout
        for query, vector in zip(queries, vectors, strict=True):
            if legs != "keyword":
                hits.add_dense(name, self._dense(store, index, vector, chunk_depth), depth)
            if legs != "dense":
                # BM25 indexes documents, never windows: ``depth`` hits are ``depth`` docs.
                hits.add_keyword(name, index.keywords.search(query, depth))
        hits.resolve_windows(index.keywords.document)
        for coded in index.keywords.with_codes(codes):
            hits.candidate(name, coded).code_match = True
        for candidate in hits.candidates.values():
            code = candidate.metadata.get("error_code")
            if code and canonical_code(str(code)) in codes:
                candidate.code_match = True
        self._fill_dense_scores(store, index, hits, vectors)
        if self.config.fusion == "zscore" and self.config.zscore_unranked == "scored":
            self._score_unranked(store, index, hits, queries, vectors)
        return hits

    def _dense(self, store: VectorStore, index: _Index, vector: Any, k: int) -> list[ScoredChunk]:
        """The ``k`` nearest chunks, each window standing as its document.

        The store answers ids and distances only; the text and metadata come from the keyword
        index, which holds every document, and only a chunk written since the index was built
        is read from the store.
        """
        nearest = _upstream("searching the vector store", partial(store.nearest, vector, k))
        known: dict[str, KnowledgeChunk] = {}
        unknown: list[str] = []
        for chunk_id, _ in nearest:
            document = index.keywords.document(index.parents.get(chunk_id, chunk_id))
            if document is None:
                unknown.append(chunk_id)
            else:
                known[chunk_id] = document
        if unknown:
            read = _upstream("reading chunks", partial(store.chunks, unknown))
            known.update((c.id, c) for c in read)
        return [
            ScoredChunk(id=c.id, text=c.text, metadata=c.metadata, similarity=similarity)
            for chunk_id, similarity in nearest
            if (c := known.get(chunk_id)) is not None
        ]

    def _score_unranked(
        self,
        store: VectorStore,
        index: _Index,
        hits: CollectionHits,
        queries: Sequence[str],
        vectors: Sequence[Any],
    ) -> None:
        """Give each ranking its own score of every candidate it did not rank.

        Z-scores standardise each list over all candidates; a doc one leg missed then counts
        with what that leg really thinks of it (its best chunk's cosine, its BM25 score)
        instead of the list's lowest score.
        """
        keys = list(hits.candidates)
        for ranking, vector in zip(hits.dense, vectors, strict=False):
            ranked = {key for key, _ in ranking}
            missing = [key for key in keys if key not in ranked]
            family = self._document_vectors(store, index, [key[1] for key in missing])
            query = np.asarray(vector, dtype=np.float32)
            for key in missing:
                chunks = family.get(key[1])
                if chunks is not None:
                    ranking.append((key, float(np.max(chunks @ query))))
        for ranking, query_text in zip(hits.keyword, queries, strict=False):
            ranked = {key for key, _ in ranking}
            missing = [key for key in keys if key not in ranked]
            scored = index.keywords.score_documents(query_text, [key[1] for key in missing])
            for key in missing:
                hit = scored.get(key[1])
                if hit is not None:
                    ranking.append((key, hit.score))
                    hits.candidates[key].see_coverage(hit)

    def _document_vectors(
        self, store: VectorStore, index: _Index, doc_ids: Sequence[str]
    ) -> dict[str, Any]:
        """Each document's chunk vectors (itself and its windows) as one matrix.

        Read from the store once per index: every request re-scores the other leg's
        candidates, and two store reads per request were a third of a query's time.
        """
        with index.vectors_lock:
            found = {i: index.vectors[i] for i in doc_ids if i in index.vectors}
        need = [i for i in doc_ids if i not in found]
        if not need:
            return found
        stored = _upstream("reading stored vectors", lambda: store.document_vectors(need))
        read = {i: np.asarray(v, dtype=np.float32) for i, v in stored.items()}
        with index.vectors_lock:
            index.vectors.update(read)
            while len(index.vectors) > VECTOR_CACHE_DOCUMENTS:
                del index.vectors[next(iter(index.vectors))]  # the oldest read
        return found | read

    def _fill_dense_scores(
        self, store: VectorStore, index: _Index, hits: CollectionHits, vectors: Sequence[Any]
    ) -> None:
        """Give every candidate the dense leg did not rank its best chunk's cosine."""
        missing = [c for c in hits.candidates.values() if c.dense_score is None]
        if not missing:
            return
        family = self._document_vectors(store, index, [c.id for c in missing])
        queries = np.asarray(vectors, dtype=np.float32)
        for candidate in missing:
            chunks = family.get(candidate.id)
            if chunks is not None:
                best = float(np.max(chunks @ queries.T))
                candidate.dense_score = max(0.0, min(1.0, best))

    def _fuse(
        self, per_collection: Iterable[CollectionHits], codes: Sequence[str]
    ) -> list[RankedDoc]:
        candidates: dict[DocKey, Candidate] = {}
        dense: list[Scored] = []
        keyword: list[Scored] = []
        for hits in per_collection:
            candidates.update(hits.candidates)
            dense.extend(hits.dense)
            keyword.extend(hits.keyword)
        fused = self._fused_scores(dense, keyword)
        for key in candidates:
            fused.setdefault(key, 0.0)
        self._boost_codes(fused, candidates, codes)
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
                keyword_coverage=c.keyword_coverage,
                document_coverage=c.document_coverage,
            )
            for key in order
            for c in (candidates[key],)
        ]

    def _fused_scores(self, dense: list[Scored], keyword: list[Scored]) -> dict[DocKey, float]:
        """One fused score per key from every dense and keyword ranking."""
        if self.config.fusion == "rrf":
            rankings = [[key for key, _ in ranking] for ranking in [*dense, *keyword]]
            return reciprocal_rank_fusion(rankings, self.config.rrf_k)
        weight = self.config.dense_weight
        weights = [weight / max(len(dense), 1)] * len(dense)
        weights += [(1.0 - weight) / max(len(keyword), 1)] * len(keyword)
        return zscore_fusion([*dense, *keyword], weights)

    def _boost_codes(
        self,
        fused: dict[DocKey, float],
        candidates: Mapping[DocKey, Candidate],
        codes: Sequence[str],
    ) -> None:
        """Lift the best-fused doc of each code the query names above every other doc."""
        boost = self.config.code_match_boost
        if boost <= 0 or not codes:
            return
        spread = (max(fused.values()) - min(fused.values())) if fused else 0.0
        amount = boost * (spread if spread > 0 else 1.0)
        best: dict[str, DocKey] = {}
        for key, candidate in candidates.items():
            code = candidate.metadata.get("error_code")
            if not candidate.code_match or not code:
                continue
            canonical = canonical_code(str(code))
            if canonical not in best or fused[key] > fused[best[canonical]]:
                best[canonical] = key
        for key in best.values():
            fused[key] += amount

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
