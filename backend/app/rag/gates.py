"""The two score gates between recall and the answer.

1. The retrieval floor looks at each candidate's *evidence*, on a fixed 0-1 scale whichever leg
   found it: the largest of its dense cosine similarity (the engine computes it for documents only
   BM25 found, so a keyword hit is never judged by a missing score), its keyword coverage (the
   share of the query's word weight it contains) and its document coverage (the share of its own
   word weight the query contains: a log line holds every word of its template), see
   ``app.rag.bm25``. Never the fused score, whose
   scale depends on the fusion and on how many lists were fused. An exact ``error_code`` match
   passes whatever its scores: an exact code is stronger evidence than any similarity. When
   nothing passes, a doc that clearly leads every other family stands alone (``clear_lead``).
2. The confidence threshold looks at *rerank scores* only; without a successful rerank it is
   skipped (there is nothing calibrated to compare against).

A missing score counts as 0.0, so a positive gate drops it.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.rag.retrieve import RankedDoc
from app.rag.windows import PARENT_KEY


def score_or_zero(score: float | None) -> float:
    """``score``, or 0.0 when it is missing."""
    return 0.0 if score is None else float(score)


def evidence(doc: RankedDoc) -> float:
    """The doc's strongest evidence, 0-1: dense similarity or keyword coverage either way."""
    return max(
        score_or_zero(doc.dense_score),
        score_or_zero(doc.keyword_coverage),
        score_or_zero(doc.document_coverage),
    )


def passes_floor(doc: RankedDoc, floor: float) -> bool:
    """Whether ``doc`` clears the retrieval floor.

    Args:
        doc: A fused candidate.
        floor: Minimum evidence (dense similarity or keyword coverage).

    Returns:
        True when its evidence is at least ``floor`` or it is an exact code match.
    """
    return doc.code_match or evidence(doc) >= floor


def apply_floor(docs: Sequence[RankedDoc], floor: float) -> list[RankedDoc]:
    """The candidates that clear the retrieval floor, order kept."""
    return [d for d in docs if passes_floor(d, floor)]


def family_of(doc: RankedDoc) -> str:
    """What a doc is one of: its error code, else its document (a window counts as its doc)."""
    return str(doc.metadata.get("error_code") or doc.metadata.get(PARENT_KEY) or doc.id)


def clear_lead(
    docs: Sequence[RankedDoc], *, floor: float, lead_floor: float, margin: float
) -> RankedDoc | None:
    """When no doc clears the floor: the best one, if it clearly leads every other family.

    "fridge data missing" is 0.39 from the chiller entry and at most 0.21 from any other: under
    the floor, yet retrieval knows which family it is about. The best doc stands when its
    evidence is at least ``lead_floor`` and ahead of the best doc of every other family by
    ``margin``; a lead of 0.05 over the runner-up ("chip and pin failing": 0.38 against 0.33)
    is no lead. Off when ``lead_floor`` is not under the floor.

    Args:
        docs: The fused candidates, none of which cleared the floor.
        floor: The retrieval floor.
        lead_floor: The least evidence a leading doc needs.
        margin: How far it must lead the best doc of every other family.

    Returns:
        The leading doc, or None.
    """
    if not docs or not 0 < lead_floor < floor:
        return None
    top = max(docs, key=evidence)
    family, best = family_of(top), evidence(top)
    runner_up = max((evidence(d) for d in docs if family_of(d) != family), default=0.0)
    return top if best >= lead_floor and best - runner_up >= margin else None


def apply_confidence(docs: Sequence[RankedDoc], threshold: float) -> list[RankedDoc]:
    """The reranked candidates whose rerank score reaches ``threshold``, order kept."""
    return [d for d in docs if score_or_zero(d.rerank_score) >= threshold]
