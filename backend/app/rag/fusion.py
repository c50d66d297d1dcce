"""Reciprocal rank fusion: merge ranked lists by rank alone, so unlike scores never mix.

``fused(d) = sum over lists containing d of 1 / (k + rank)`` with ranks from 1. BM25 scores and
cosine similarities live on different scales; RRF needs only each list's order. A larger ``k``
flattens the head of every list (k=60 is the usual default; the README of the shared SciFact copy
found k 1-2 best there).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

DEFAULT_RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], k: int = DEFAULT_RRF_K
) -> dict[K, float]:
    """Fused score of every key that appears in any ranking.

    A key repeated within one ranking counts at its first (best) position only.

    Args:
        rankings: Ranked lists of stable keys, best first.
        k: The RRF constant (>= 0); larger values weigh low ranks more evenly.

    Returns:
        Key -> fused score (unordered; see ``order_by_fused``).

    Raises:
        ValueError: ``k`` is negative.
    """
    if k < 0:
        raise ValueError("the RRF constant k must be >= 0")
    fused: dict[K, float] = {}
    for ranking in rankings:
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused


def order_by_fused(
    fused: dict[K, float],
    tie_scores: dict[K, tuple[float, ...]] | None = None,
    tie_ids: dict[K, str] | None = None,
) -> list[K]:
    """Keys by fused score descending; ties by ``tie_scores`` descending, then by id ascending.

    Args:
        fused: Key -> fused score.
        tie_scores: Key -> scores compared in order when fused scores tie (missing -> zeros).
        tie_ids: Key -> the stable id used last (default ``str(key)``).

    Returns:
        The keys in their final order, deterministic for equal inputs.
    """
    scores = tie_scores or {}
    ids = tie_ids or {}
    width = max((len(v) for v in scores.values()), default=0)

    def sort_key(key: K) -> tuple[float, tuple[float, ...], str]:
        own = scores.get(key, ())
        padded = tuple(own) + (0.0,) * (width - len(own))
        return (-fused[key], tuple(-s for s in padded), ids.get(key, str(key)))

    return sorted(fused, key=sort_key)
