"""Retrieval modes for the BEIR harness: build an index over a corpus once, then rank queries.

A mode is a factory registered by name that receives a ``ModeContext`` (the corpus, a lazily
built embedder, the embedding cache) and returns a ``Ranker``. Modes may ask the context for
other modes' rankers, which are built once and shared: ``hybrid`` fuses the ``dense`` and
``bm25`` rankings without embedding the corpus twice. The product's own hybrid engine can
replace ``hybrid`` with ``register_mode("hybrid", factory)``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from app.rag.embedding import Embedder, Vectors

logger = logging.getLogger(__name__)

#: One query's results: (doc id, score), best first.
Ranked = list[tuple[str, float]]

DEFAULT_RRF_K = 60


class Ranker(Protocol):
    """Ranks the corpus it was built over."""

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """The best ``k`` docs for each query, in query order."""
        ...


@dataclass(frozen=True)
class Corpus:
    """The docs a mode indexes; ``key`` identifies their content for caching."""

    ids: list[str]
    texts: list[str]
    key: str


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = DEFAULT_RRF_K) -> Ranked:
    """Reciprocal rank fusion: ``score(d) = sum over lists of 1 / (k + rank of d)``.

    Ranks are 1-based; a doc missing from a list gets nothing from it, and a doc repeated
    within one list counts at its first position only. Equal scores are ordered by id so the
    output is reproducible.

    Args:
        rankings: Doc ids per input ranking, best first.
        k: The RRF constant; larger values flatten the contribution of top ranks.

    Returns:
        (doc id, fused score), best first.
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id not in seen:
                seen.add(doc_id)
                scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def top_k(scores: Vectors, ids: Sequence[str], k: int) -> Ranked:
    """The ``k`` highest-scoring ids; equal scores keep corpus order.

    Args:
        scores: One score per doc.
        ids: The doc ids, aligned with ``scores``.
        k: How many to return.

    Returns:
        (doc id, score), best first.
    """
    k = min(k, len(ids))
    if k <= 0:
        return []
    candidates = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    return [(ids[i], float(scores[i])) for i in order]


class ModeContext:
    """What a mode factory may use; builds each named ranker at most once."""

    def __init__(
        self,
        corpus: Corpus,
        embedder_factory: Callable[[], Embedder],
        cache_dir: Path | None = None,
        rrf_k: int = DEFAULT_RRF_K,
        depth: int = 100,
    ) -> None:
        self.corpus = corpus
        self.cache_dir = cache_dir
        self.rrf_k = rrf_k
        self.depth = depth
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._rankers: dict[str, Ranker] = {}

    @property
    def embedder(self) -> Embedder:
        """The embedder, created on first use (BM25-only runs never load the model)."""
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def ranker(self, mode: str) -> Ranker:
        """The ranker of a registered mode, built on first request.

        Args:
            mode: A registered mode name.

        Returns:
            The shared ranker.

        Raises:
            KeyError: When no mode has that name.
        """
        if mode not in self._rankers:
            self._rankers[mode] = _Memo(MODES[mode](self))
        return self._rankers[mode]


class _Memo:
    """Remembers a ranker's last answer, so a fused mode reuses its parts' finished runs."""

    def __init__(self, inner: Ranker) -> None:
        self.inner = inner
        self._last: tuple[tuple[str, ...], int, list[Ranked]] | None = None

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """The inner ranker's answer, reused when the same queries come back."""
        key = tuple(queries)
        if self._last is not None and self._last[0] == key and self._last[1] >= k:
            return [ranked[:k] for ranked in self._last[2]]
        results = self.inner.rank(queries, k)
        self._last = (key, k, results)
        return results


ModeFactory = Callable[[ModeContext], Ranker]

#: Registered modes by name, in the order they are reported.
MODES: dict[str, ModeFactory] = {}


def register_mode(name: str, factory: ModeFactory) -> None:
    """Register (or replace) a mode.

    Args:
        name: The name used on the command line.
        factory: Builds the mode's ranker from a context.
    """
    MODES[name] = factory


class DenseRanker:
    """One embedding per doc (the model's 256-token window), brute-force cosine in numpy."""

    def __init__(self, embedder: Embedder, corpus: Corpus, cache_dir: Path | None = None) -> None:
        self.embedder = embedder
        self.ids = corpus.ids
        self.matrix = self._load_or_embed(corpus, cache_dir)

    def _load_or_embed(self, corpus: Corpus, cache_dir: Path | None) -> Vectors:
        path = None
        if cache_dir is not None:
            name = f"{self.embedder.model_id}-{corpus.key}.npy"
            path = cache_dir / name
            if path.is_file():
                cached = np.load(path)
                if cached.shape[0] == len(corpus.ids):
                    logger.info("loaded %d doc embeddings from %s", len(corpus.ids), path)
                    return np.asarray(cached, dtype=np.float32)
        logger.info("embedding %d docs", len(corpus.texts))
        matrix = self.embedder.embed_documents(corpus.texts)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write then rename, so an interrupted run never leaves a truncated cache file.
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
            np.save(tmp, matrix)
            tmp.replace(path)
        return matrix

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Cosine similarity of each query embedding to every doc embedding."""
        results: list[Ranked] = []
        for query in queries:
            scores = self.matrix @ self.embedder.embed_query(query)
            results.append(top_k(scores, self.ids, k))
        return results


class Bm25Ranker:
    """bm25s (Lucene BM25, k1 1.5, b 0.75) with English stop words and Snowball stemming."""

    def __init__(self, corpus: Corpus) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.ids = corpus.ids
        tokens = bm25s.tokenize(
            corpus.texts, stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._index = bm25s.BM25()
        self._index.index(tokens, show_progress=False)

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """BM25 scores; docs sharing no term with the query are not returned."""
        tokenized = self._bm25s.tokenize(
            list(queries),
            stopwords="en",
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        vocab = self._index.vocab_dict
        known = [[t for t in tokens if t in vocab] for tokens in tokenized]
        results: list[Ranked] = [[] for _ in queries]
        todo = [i for i, tokens in enumerate(known) if tokens]
        depth = min(k, len(self.ids))
        if not todo or depth <= 0:
            return results
        docs, scores = self._index.retrieve([known[i] for i in todo], k=depth, show_progress=False)
        for row, i in enumerate(todo):
            results[i] = [
                (self.ids[int(d)], float(s))
                for d, s in zip(docs[row], scores[row], strict=True)
                if s > 0
            ]
        return results


class FusionRanker:
    """Fuses the rankings of other modes with a rank-fusion function (RRF by default)."""

    def __init__(
        self,
        parts: Sequence[Ranker],
        fuse: Callable[[Sequence[Sequence[str]]], Ranked],
        depth: int = 100,
    ) -> None:
        self.parts = list(parts)
        self.fuse = fuse
        self.depth = depth

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Fuse each part's top ``depth`` for every query; keep the best ``k``."""
        per_part = [part.rank(queries, max(k, self.depth)) for part in self.parts]
        fused: list[Ranked] = []
        for i in range(len(queries)):
            fused.append(self.fuse([[d for d, _ in part[i]] for part in per_part])[:k])
        return fused


def _dense(ctx: ModeContext) -> Ranker:
    return DenseRanker(ctx.embedder, ctx.corpus, ctx.cache_dir)


def _bm25(ctx: ModeContext) -> Ranker:
    return Bm25Ranker(ctx.corpus)


def _hybrid(ctx: ModeContext) -> Ranker:
    rrf_k = ctx.rrf_k
    return FusionRanker(
        [ctx.ranker("dense"), ctx.ranker("bm25")],
        fuse=lambda rankings: rrf_fuse(rankings, k=rrf_k),
        depth=ctx.depth,
    )


register_mode("dense", _dense)
register_mode("bm25", _bm25)
register_mode("hybrid", _hybrid)
