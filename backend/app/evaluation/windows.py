"""Windowed dense retrieval for the BEIR harness: short overlapping passages, doc = best passage.

The model reads at most 256 tokens, so one vector per doc never sees the tail of a long
abstract. Here each doc body is cut into windows of ``size`` model tokens every ``stride``
tokens, the title is put in front of every window, each window is embedded, and a doc scores
the best of its windows' cosine similarities. Window embeddings are cached on disk like the
plain dense mode's doc embeddings, keyed by model id, corpus key and window parameters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from app.evaluation.modes import (
    DEFAULT_WINDOW_STRIDE,
    DEFAULT_WINDOW_TOKENS,
    Corpus,
    Ranked,
    load_or_embed,
    top_k,
)
from app.rag.embedding import TOKENIZER_PATH, Embedder, Vectors

logger = logging.getLogger(__name__)

#: Character spans (start, end) of each token of a text, in order.
Offsets = list[tuple[int, int]]
#: Token spans of many texts at once.
Tokenize = Callable[[Sequence[str]], list[Offsets]]


def window_spans(n_tokens: int, size: int, stride: int) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of the windows over ``n_tokens`` tokens.

    Windows start at 0, ``stride``, ``2·stride`` … and stop at the first one that reaches the
    last token, so no window lies wholly inside the overlap of the previous one's end. A text of
    at most ``size`` tokens, including an empty one, is a single window.

    Args:
        n_tokens: How many tokens the text has.
        size: Tokens per window.
        stride: Tokens between the starts of consecutive windows (``0 < stride <= size``).

    Returns:
        The spans, in order.

    Raises:
        ValueError: When ``size`` or ``stride`` is out of range.
    """
    if size <= 0 or not 0 < stride <= size:
        raise ValueError(f"need 0 < stride <= size, got size {size}, stride {stride}")
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n_tokens)
        spans.append((start, end))
        if end >= n_tokens:
            return spans
        start += stride


def split_windows(title: str, body: str, offsets: Offsets, size: int, stride: int) -> list[str]:
    """The texts of one doc's windows: the title, a space, then a slice of the body.

    Slices are cut at token boundaries taken from ``offsets``, so the body text between them
    (spacing, case, accents) is kept as written. A doc without body tokens is one window holding
    only its title, so every doc has at least one window.

    Args:
        title: The doc title (may be empty).
        body: The doc body.
        offsets: Character spans of the body's tokens.
        size: Tokens per window.
        stride: Tokens between window starts.

    Returns:
        One text per window, in body order.
    """
    head = title.strip()
    if not offsets:
        return [head]
    texts = []
    for start, end in window_spans(len(offsets), size, stride):
        passage = body[offsets[start][0] : offsets[end - 1][1]]
        texts.append(f"{head} {passage}" if head else passage)
    return texts


def build_windows(
    titles: Sequence[str],
    bodies: Sequence[str],
    tokenize: Tokenize,
    size: int = DEFAULT_WINDOW_TOKENS,
    stride: int = DEFAULT_WINDOW_STRIDE,
) -> tuple[list[str], npt.NDArray[np.int64]]:
    """Every doc's windows, concatenated in doc order.

    Args:
        titles: One title per doc.
        bodies: One body per doc.
        tokenize: Token character spans of many bodies.
        size: Tokens per window.
        stride: Tokens between window starts.

    Returns:
        The window texts and, per doc, the index of its first window.
    """
    texts: list[str] = []
    starts = np.empty(len(bodies), dtype=np.int64)
    for doc, (title, body, offsets) in enumerate(
        zip(titles, bodies, tokenize(bodies), strict=True)
    ):
        starts[doc] = len(texts)
        texts.extend(split_windows(title, body, offsets, size, stride))
    return texts, starts


def max_by_doc(window_scores: Vectors, starts: npt.NDArray[np.int64]) -> Vectors:
    """Each doc's best window score.

    Args:
        window_scores: One score per window, windows grouped by doc in doc order.
        starts: Per doc, the index of its first window (strictly increasing; every doc has a
            window).

    Returns:
        One score per doc.
    """
    if len(starts) == 0:
        return np.zeros(0, dtype=np.float32)
    pooled: Vectors = np.maximum.reduceat(window_scores, starts).astype(np.float32)
    return pooled


@lru_cache(maxsize=1)
def _wordpiece() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def wordpiece_offsets(texts: Sequence[str]) -> list[Offsets]:
    """Character spans of the embedding model's word pieces, without special tokens.

    Args:
        texts: The texts to tokenize.

    Returns:
        One list of spans per text.
    """
    encodings = _wordpiece().encode_batch(list(texts), add_special_tokens=False)
    return [list(e.offsets) for e in encodings]


class WindowRanker:
    """Dense retrieval over title-prefixed body windows; a doc scores its best window."""

    def __init__(
        self,
        embedder: Embedder,
        corpus: Corpus,
        cache_dir: Path | None = None,
        size: int = DEFAULT_WINDOW_TOKENS,
        stride: int = DEFAULT_WINDOW_STRIDE,
        tokenize: Tokenize = wordpiece_offsets,
    ) -> None:
        self.embedder = embedder
        self.ids = corpus.ids
        titles, bodies = corpus.titles_and_bodies()
        texts, self.starts = build_windows(titles, bodies, tokenize, size, stride)
        logger.info("%d windows over %d docs", len(texts), len(corpus.ids))
        path = None
        if cache_dir is not None:
            path = cache_dir / f"{embedder.model_id}-{corpus.key}-win{size}s{stride}.npy"
        self.matrix = load_or_embed(embedder, texts, path)

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        """Best-window cosine similarity of each query to every doc."""
        results: list[Ranked] = []
        for query in queries:
            scores = max_by_doc(self.matrix @ self.embedder.embed_query(query), self.starts)
            results.append(top_k(scores, self.ids, k))
        return results
