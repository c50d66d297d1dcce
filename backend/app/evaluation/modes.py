"""Retrieval modes for the BEIR harness: build an index over a corpus once, then rank queries.

A mode is a factory registered by name that receives a ``ModeContext`` (the corpus, a lazily
built embedder, the embedding cache, the ``ModeOptions``) and returns a ``Ranker``. Modes may
ask the context for other modes' rankers, which are built once and shared: ``hybrid`` fuses the
``dense`` and ``bm25`` rankings without embedding the corpus twice, and ``blend`` mixes the
z-scored ``bm25-tuned`` and ``dense-window`` scores. ``hybrid+rerank`` sends ``hybrid``'s top
candidates to the configured reranker (``RCA_RERANK_URL``), the product's second stage. The
product's own hybrid engine can replace ``hybrid`` with ``register_mode("hybrid", factory)``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from app.core.errors import ConfigurationError, UpstreamError
from app.rag.embedding import Embedder, Vectors
from app.rag.rerank import Reranker, RerankScore, rerank_permutation

logger = logging.getLogger(__name__)

#: One query's results: (doc id, score), best first.
Ranked = list[tuple[str, float]]

DEFAULT_RRF_K = 60
#: Model tokens per ``dense-window`` window, and between window starts: the shared README's
#: ceiling study (chosen there on SciFact train).
DEFAULT_WINDOW_TOKENS = 96
DEFAULT_WINDOW_STRIDE = 48
#: Weight of ``bm25-tuned`` in ``blend``; ``dense-window`` gets the rest. The SciFact train
#: optimum (see docs/architecture/retrieval-evaluation.md).
DEFAULT_BLEND_WEIGHT = 0.45


class Ranker(Protocol):
    """Ranks the corpus it was built over."""

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """The best ``k`` docs for each query, in query order."""
        ...


@dataclass(frozen=True)
class Corpus:
    """The docs a mode indexes; ``key`` identifies their content for caching.

    ``texts`` are what the plain modes index (title and body joined by a space). ``titles`` and
    ``bodies`` keep the two apart, for modes that weight or place the title; a corpus without
    them reads as untitled docs whose body is the text.
    """

    ids: list[str]
    texts: list[str]
    key: str
    titles: list[str] | None = None
    bodies: list[str] | None = None

    def titles_and_bodies(self) -> tuple[list[str], list[str]]:
        """Titles and bodies, one each per doc (empty titles when the corpus has none)."""
        if self.titles is None or self.bodies is None:
            return [""] * len(self.texts), self.texts
        return self.titles, self.bodies

    def texts_with_title_repeated(self, times: int) -> list[str]:
        """Each doc as its title ``times`` times, then its body, joined by spaces.

        Args:
            times: How often the title is repeated; 1 gives ``texts`` itself.

        Returns:
            One text per doc.
        """
        if times == 1:
            return self.texts
        titles, bodies = self.titles_and_bodies()
        return [" ".join([t] * times + [b]).strip() for t, b in zip(titles, bodies, strict=True)]


@dataclass(frozen=True)
class ModeOptions:
    """Parameters of the modes (the defaults were chosen on SciFact train)."""

    rrf_k: int = DEFAULT_RRF_K
    depth: int = 100
    window_tokens: int = DEFAULT_WINDOW_TOKENS
    window_stride: int = DEFAULT_WINDOW_STRIDE
    blend_weight: float = DEFAULT_BLEND_WEIGHT
    #: Candidates ``hybrid+rerank`` sends to the reranker (``RCA_RERANK_MAX_DOCS``).
    rerank_depth: int = 40

    def __post_init__(self) -> None:
        if self.rrf_k < 0 or self.depth <= 0 or self.rerank_depth <= 0:
            raise ConfigurationError("need rrf_k >= 0, depth > 0 and rerank depth > 0")
        if not 0 < self.window_stride <= self.window_tokens:
            raise ConfigurationError("need 0 < window stride <= window tokens")
        if not 0.0 <= self.blend_weight <= 1.0:
            raise ConfigurationError("the blend weight must lie in [0, 1]")


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


def zscore_blend(parts: Sequence[Ranked], weights: Sequence[float]) -> Ranked:
    """Weighted sum of per-list z-scores over the union of the lists' docs.

    For each list, a doc it does not contain takes that list's lowest score: it ranked below
    everything the list returned, and the list's minimum is the closest bound known without
    scoring the whole corpus. Each list's scores over the union are then standardised (mean 0,
    population standard deviation 1); a list whose scores are all equal, or that is empty, says
    nothing about the order and contributes 0 to every doc. A doc repeated within a list keeps
    its first score. Equal results are ordered by id.

    Args:
        parts: (doc id, score) lists, one per ranker, on any scale.
        weights: One weight per list.

    Returns:
        (doc id, blended score), best first.

    Raises:
        ValueError: When the numbers of lists and weights differ.
    """
    if len(parts) != len(weights):
        raise ValueError(f"{len(parts)} lists but {len(weights)} weights")
    union = list(dict.fromkeys(doc_id for part in parts for doc_id, _ in part))
    blended = np.zeros(len(union), dtype=np.float64)
    for part, weight in zip(parts, weights, strict=True):
        scores: dict[str, float] = {}
        for doc_id, score in part:
            scores.setdefault(doc_id, score)
        if not scores:
            continue
        floor = min(scores.values())
        column = np.array([scores.get(doc_id, floor) for doc_id in union], dtype=np.float64)
        spread = float(column.std())
        if spread > 0.0:
            blended += weight * (column - column.mean()) / spread
    return sorted(
        zip(union, (float(v) for v in blended), strict=True), key=lambda kv: (-kv[1], kv[0])
    )


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
        options: ModeOptions | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.corpus = corpus
        self.cache_dir = cache_dir
        self.options = options or ModeOptions()
        self.reranker = reranker
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


def load_or_embed(embedder: Embedder, texts: Sequence[str], path: Path | None) -> Vectors:
    """Embed ``texts``, or load their embeddings from ``path`` when a matching file is there.

    Args:
        embedder: Embeds documents.
        texts: The texts, one row each.
        path: The cache file (``None``: no cache). The caller names it by everything that
            determines the rows (model id, corpus key, how texts were cut).

    Returns:
        One unit row per text.
    """
    if path is not None and path.is_file():
        cached = np.load(path)
        if cached.shape[0] == len(texts):
            logger.info("loaded %d embeddings from %s", len(texts), path)
            return np.asarray(cached, dtype=np.float32)
    logger.info("embedding %d texts", len(texts))
    matrix = embedder.embed_documents(texts)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so an interrupted run never leaves a truncated cache file.
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, matrix)
        tmp.replace(path)
    return matrix


class DenseRanker:
    """One embedding per doc (the model's 256-token window), brute-force cosine in numpy."""

    def __init__(self, embedder: Embedder, corpus: Corpus, cache_dir: Path | None = None) -> None:
        self.embedder = embedder
        self.ids = corpus.ids
        path = None
        if cache_dir is not None:
            path = cache_dir / f"{embedder.model_id}-{corpus.key}.npy"
        self.matrix = load_or_embed(embedder, corpus.texts, path)

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Cosine similarity of each query embedding to every doc embedding."""
        results: list[Ranked] = []
        for query in queries:
            scores = self.matrix @ self.embedder.embed_query(query)
            results.append(top_k(scores, self.ids, k))
        return results


@dataclass(frozen=True)
class Bm25Params:
    """A bm25s scoring variant and how often the title is repeated in the indexed text."""

    method: str = "lucene"
    k1: float = 1.5
    b: float = 0.75
    title_repeats: int = 1


#: The ``bm25`` mode: bm25s defaults, title once.
PLAIN_BM25 = Bm25Params()
#: The ``bm25-tuned`` mode, from the shared README's SciFact ceiling study (chosen there on the
#: train split): ATIRE idf, long docs penalised harder, the title weighted three times.
TUNED_BM25 = Bm25Params(method="atire", k1=1.2, b=0.9, title_repeats=3)


class Bm25Ranker:
    """bm25s with English stop words and Snowball stemming (default: Lucene, k1 1.5, b 0.75)."""

    def __init__(self, corpus: Corpus, params: Bm25Params = PLAIN_BM25) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.ids = corpus.ids
        tokens = bm25s.tokenize(
            corpus.texts_with_title_repeated(params.title_repeats),
            stopwords="en",
            stemmer=self._stemmer,
            show_progress=False,
        )
        self._index = bm25s.BM25(method=params.method, k1=params.k1, b=params.b)
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
    """Combines the rankings of other modes, each read to ``depth``, with one function."""

    def __init__(
        self,
        parts: Sequence[Ranker],
        fuse: Callable[[Sequence[Ranked]], Ranked],
        depth: int = 100,
    ) -> None:
        self.parts = list(parts)
        self.fuse = fuse
        self.depth = depth

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Combine each part's top ``depth`` for every query; keep the best ``k``."""
        per_part = [part.rank(queries, max(k, self.depth)) for part in self.parts]
        return [self.fuse([part[i] for part in per_part])[:k] for i in range(len(queries))]


class BlendRanker(FusionRanker):
    """Blends other modes' scores with ``zscore_blend``, each part read to ``depth``."""

    def __init__(self, parts: Sequence[Ranker], weights: Sequence[float], depth: int = 100) -> None:
        weights = list(weights)
        super().__init__(parts, lambda ranked: zscore_blend(ranked, weights), depth)


def rerank_order(candidates: Ranked, scores: Sequence[RerankScore]) -> Ranked:
    """``candidates`` reordered by the reranker's scores.

    Scored candidates come first, best score first (equal scores keep their fused order), each
    with its rerank score; candidates the reranker left out follow in fused order with score
    ``-inf``, so they never outrank a scored one.

    Args:
        candidates: (doc id, fused score) in fused order, as sent to the reranker.
        scores: The reranker's scores; indexes refer to positions in ``candidates``.

    Returns:
        The reordered candidates.
    """
    order, by_index = rerank_permutation(len(candidates), scores)
    return [(candidates[i][0], by_index.get(i, float("-inf"))) for i in order]


class RerankRanker:
    """Another ranker's top ``depth`` rescored by a reranker; the tail keeps its order.

    A query whose rerank call fails keeps the fused order (as the product's engine does) and
    is counted in ``fallbacks``.
    """

    def __init__(self, base: Ranker, reranker: Reranker, corpus: Corpus, depth: int = 40) -> None:
        self.base = base
        self.reranker = reranker
        self.depth = depth
        self.texts = dict(zip(corpus.ids, corpus.texts, strict=True))
        self.fallbacks = 0

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Rerank each query's top ``depth`` of the base ranking, then keep the best ``k``."""
        results: list[Ranked] = []
        for query, ranked in zip(queries, self.base.rank(queries, k), strict=True):
            head, tail = ranked[: self.depth], ranked[self.depth :]
            try:
                scores = self.reranker.rerank(query, [self.texts[d] for d, _ in head])
            except UpstreamError as exc:
                self.fallbacks += 1
                logger.warning("rerank failed (%s); this query keeps the fused order", exc)
                results.append(ranked[:k])
                continue
            results.append((rerank_order(head, scores) + tail)[:k])
        return results


def _dense(ctx: ModeContext) -> Ranker:
    return DenseRanker(ctx.embedder, ctx.corpus, ctx.cache_dir)


def _bm25(ctx: ModeContext) -> Ranker:
    return Bm25Ranker(ctx.corpus)


def _hybrid(ctx: ModeContext) -> Ranker:
    rrf_k = ctx.options.rrf_k
    return FusionRanker(
        [ctx.ranker("dense"), ctx.ranker("bm25")],
        fuse=lambda ranked: rrf_fuse([[d for d, _ in r] for r in ranked], k=rrf_k),
        depth=ctx.options.depth,
    )


def _dense_window(ctx: ModeContext) -> Ranker:
    # Imported here: windows.py builds on this module's helpers.
    from app.evaluation.windows import WindowRanker

    options = ctx.options
    return WindowRanker(
        ctx.embedder, ctx.corpus, ctx.cache_dir, options.window_tokens, options.window_stride
    )


def _bm25_tuned(ctx: ModeContext) -> Ranker:
    return Bm25Ranker(ctx.corpus, TUNED_BM25)


def _blend(ctx: ModeContext) -> Ranker:
    weight = ctx.options.blend_weight
    return BlendRanker(
        [ctx.ranker("bm25-tuned"), ctx.ranker("dense-window")],
        weights=[weight, 1.0 - weight],
        depth=ctx.options.depth,
    )


register_mode("dense", _dense)
register_mode("bm25", _bm25)
register_mode("hybrid", _hybrid)
register_mode("dense-window", _dense_window)
register_mode("bm25-tuned", _bm25_tuned)


def _hybrid_rerank(ctx: ModeContext) -> Ranker:
    if ctx.reranker is None:
        raise ConfigurationError("mode hybrid+rerank needs a reranker: set RCA_RERANK_URL")
    return RerankRanker(
        ctx.ranker("hybrid"), ctx.reranker, ctx.corpus, depth=ctx.options.rerank_depth
    )


register_mode("blend", _blend)
register_mode("hybrid+rerank", _hybrid_rerank)
