"""Ranking metrics and rank fusion against hand-computed values."""

from __future__ import annotations

import math

import pytest

from app.evaluation.metrics import (
    dcg_at_k,
    evaluate_rankings,
    hit_at_k,
    mrr_at_k,
    ndcg_at_k,
    ranking_from_scores,
    recall_at_k,
)

L3 = math.log2(3)
L5 = math.log2(5)


def test_binary_relevance() -> None:
    ranking = ["a", "b", "c", "d"]
    qrels = {"b": 1, "d": 1}
    # DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3)
    assert dcg_at_k(ranking, qrels, 10) == pytest.approx(1 / L3 + 1 / L5)
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx((1 / L3 + 1 / L5) / (1 + 1 / L3))
    assert ndcg_at_k(ranking, qrels, 10) == pytest.approx(0.650921, abs=1e-6)
    assert mrr_at_k(ranking, qrels, 10) == 0.5
    assert recall_at_k(ranking, qrels, 2) == 0.5
    assert recall_at_k(ranking, qrels, 4) == 1.0
    assert hit_at_k(ranking, qrels, 1) == 0.0
    assert hit_at_k(ranking, qrels, 2) == 1.0


def test_graded_relevance_uses_the_grade_as_gain() -> None:
    qrels = {"a": 2, "b": 1, "c": 0}
    ranking = ["b", "a", "x"]
    # DCG = 1/1 + 2/log2(3); ideal order a, b: 2/1 + 1/log2(3)
    expected = (1 + 2 / L3) / (2 + 1 / L3)
    assert ndcg_at_k(ranking, qrels, 3) == pytest.approx(expected)
    assert ndcg_at_k(ranking, qrels, 3) == pytest.approx(0.859719, abs=1e-6)
    assert ndcg_at_k(["a", "b"], qrels, 3) == pytest.approx(1.0)
    # Cut at 1: DCG 1/1 against ideal 2/1.
    assert ndcg_at_k(ranking, qrels, 1) == pytest.approx(0.5)


def test_grade_zero_is_judged_not_relevant() -> None:
    qrels = {"a": 2, "b": 1, "c": 0}
    assert mrr_at_k(["c", "b"], qrels, 10) == 0.5
    assert hit_at_k(["c"], qrels, 1) == 0.0
    assert recall_at_k(["c", "a"], qrels, 10) == 0.5
    assert ndcg_at_k(["c"], qrels, 10) == 0.0


@pytest.mark.parametrize("qrels", [{}, {"a": 0}])
def test_no_relevant_doc_scores_zero(qrels: dict[str, int]) -> None:
    ranking = ["a", "b"]
    assert ndcg_at_k(ranking, qrels, 10) == 0.0
    assert mrr_at_k(ranking, qrels, 10) == 0.0
    assert recall_at_k(ranking, qrels, 10) == 0.0
    assert hit_at_k(ranking, qrels, 10) == 0.0


def test_cut_off_excludes_rank_k_plus_one() -> None:
    ranking = [f"d{i}" for i in range(10)] + ["hit"]
    qrels = {"hit": 1}
    assert ndcg_at_k(ranking, qrels, 10) == 0.0
    assert mrr_at_k(ranking, qrels, 10) == 0.0
    assert mrr_at_k(ranking, qrels, 11) == pytest.approx(1 / 11)
    assert recall_at_k(ranking, qrels, 11) == 1.0


def test_repeated_ids_count_once() -> None:
    qrels = {"a": 1, "b": 1}
    assert dcg_at_k(["a", "a", "b"], qrels, 3) == pytest.approx(1 + 1 / L3)
    assert ndcg_at_k(["a", "a", "b"], qrels, 2) == pytest.approx(1.0)


def test_ties_in_scores_break_by_id() -> None:
    scores = {"b": 1.0, "a": 1.0, "c": 2.0, "d": 0.5}
    assert ranking_from_scores(scores) == ["c", "a", "b", "d"]
    # With "b" relevant the tie costs a rank: 1/log2(4) = 0.5.
    assert ndcg_at_k(ranking_from_scores(scores), {"b": 1}, 10) == pytest.approx(0.5)


def test_ties_in_grades_make_any_order_ideal() -> None:
    qrels = {"a": 1, "b": 1, "c": 2}
    assert ndcg_at_k(["c", "a", "b"], qrels, 3) == pytest.approx(1.0)
    assert ndcg_at_k(["c", "b", "a"], qrels, 3) == pytest.approx(1.0)


def test_evaluate_rankings_averages_judged_queries_only() -> None:
    rankings = {"q1": ["a", "b"], "q2": ["x", "y"], "q3": ["a"]}
    qrels = {"q1": {"a": 1}, "q2": {"y": 1}, "q3": {"a": 0}, "q4": {"z": 1}}
    metrics = evaluate_rankings(rankings, qrels)
    # q3 has no relevant doc (dropped); q4 has no ranking (scores 0).
    assert metrics["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert metrics["hit@1"] == pytest.approx(1 / 3)
    assert metrics["hit@5"] == pytest.approx(2 / 3)
    assert metrics["recall@100"] == pytest.approx(2 / 3)
    assert metrics["ndcg@10"] == pytest.approx((1 + 1 / L3 + 0) / 3)
