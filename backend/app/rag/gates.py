"""The two score gates between recall and the answer.

1. The retrieval floor looks at each candidate's *dense cosine similarity* (never the RRF score,
   whose scale depends on k and on how many lists were fused). A candidate below the floor, or
   found only by BM25, survives only when its ``error_code`` metadata exactly matches a code in
   the query: an exact code is stronger evidence than any similarity.
2. The confidence threshold looks at *rerank scores* only; without a successful rerank it is
   skipped (there is nothing calibrated to compare against).

A missing score counts as 0.0, so a positive gate drops it.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.rag.retrieve import RankedDoc


def score_or_zero(score: float | None) -> float:
    """``score``, or 0.0 when it is missing."""
    return 0.0 if score is None else float(score)


def passes_floor(doc: RankedDoc, floor: float) -> bool:
    """Whether ``doc`` clears the retrieval floor.

    Args:
        doc: A fused candidate.
        floor: Minimum dense cosine similarity.

    Returns:
        True when its dense similarity is at least ``floor`` or it is an exact code match.
    """
    return doc.code_match or score_or_zero(doc.dense_score) >= floor


def apply_floor(docs: Sequence[RankedDoc], floor: float) -> list[RankedDoc]:
    """The candidates that clear the retrieval floor, order kept."""
    return [d for d in docs if passes_floor(d, floor)]


def apply_confidence(docs: Sequence[RankedDoc], threshold: float) -> list[RankedDoc]:
    """The reranked candidates whose rerank score reaches ``threshold``, order kept."""
    return [d for d in docs if score_or_zero(d.rerank_score) >= threshold]
