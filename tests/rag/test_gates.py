from dataclasses import replace

from app.rag.gates import (
    apply_confidence,
    apply_floor,
    clear_lead,
    family_of,
    passes_floor,
    score_or_zero,
)
from app.rag.retrieve import RankedDoc

BASE = RankedDoc(id="d", text="t", metadata={}, collection="c")


def test_floor_uses_dense_similarity_not_the_fused_score() -> None:
    high_fused = replace(BASE, dense_score=0.2, fused_score=5.0)
    assert not passes_floor(high_fused, 0.35)
    assert passes_floor(replace(BASE, dense_score=0.35, fused_score=0.0), 0.35)


def test_bm25_only_candidate_passes_only_on_exact_code_match() -> None:
    keyword_only = replace(BASE, bm25_score=12.0, bm25_rank=1)
    assert not passes_floor(keyword_only, 0.35)
    assert passes_floor(replace(keyword_only, code_match=True), 0.35)
    assert passes_floor(keyword_only, 0.0)


def test_apply_floor_keeps_order() -> None:
    docs = [
        replace(BASE, id="a", dense_score=0.9),
        replace(BASE, id="b", dense_score=0.1),
        replace(BASE, id="c", code_match=True),
        replace(BASE, id="d", dense_score=0.5),
    ]
    assert [d.id for d in apply_floor(docs, 0.4)] == ["a", "c", "d"]


def test_confidence_threshold_and_missing_rerank_score() -> None:
    docs = [
        replace(BASE, id="a", rerank_score=0.8),
        replace(BASE, id="b", rerank_score=None),
        replace(BASE, id="c", rerank_score=0.5),
        replace(BASE, id="d", rerank_score=0.49),
    ]
    assert [d.id for d in apply_confidence(docs, 0.5)] == ["a", "c"]
    assert [d.id for d in apply_confidence(docs, 0.0)] == ["a", "b", "c", "d"]


def test_missing_score_is_zero() -> None:
    assert score_or_zero(None) == 0.0
    assert score_or_zero(0.25) == 0.25


def test_either_coverage_clears_the_floor() -> None:
    # A log line covers little of the query side of its short template, but all of its words.
    template_hit = replace(BASE, dense_score=0.3, keyword_coverage=0.2, document_coverage=1.0)
    assert passes_floor(template_hit, 0.4)
    assert passes_floor(replace(template_hit, document_coverage=None, keyword_coverage=0.5), 0.4)
    assert not passes_floor(replace(template_hit, document_coverage=0.39), 0.4)


def family(doc_id: str, code: str, dense: float) -> RankedDoc:
    return replace(BASE, id=doc_id, metadata={"error_code": code}, dense_score=dense)


def test_under_the_floor_a_clear_lead_over_every_other_family_stands_alone() -> None:
    def lead(docs: list[RankedDoc], lead_floor: float = 0.3) -> RankedDoc | None:
        return clear_lead(docs, floor=0.4, lead_floor=lead_floor, margin=0.1)

    fridge = [family("a", "PLU", 0.21), family("b", "CH", 0.39), family("c", "CH", 0.35)]
    kept = lead(fridge)
    assert kept is not None and kept.id == "b"  # the same family's second doc is no rival
    close = [family("a", "CARD", 0.38), family("b", "PAY", 0.33)]
    assert lead(close) is None  # 0.05 ahead is no lead
    assert lead([family("a", "CH", 0.29)]) is None  # under the lead floor
    assert lead([]) is None
    assert lead(fridge, lead_floor=0.0) is None  # off
    window = replace(BASE, id="w", metadata={"parent_id": "doc-7"})
    assert family_of(window) == "doc-7" and family_of(BASE) == "d"
