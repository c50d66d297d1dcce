import pytest

from app.rag.fusion import order_by_fused, reciprocal_rank_fusion, zscore_fusion


def test_rrf_arithmetic() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)


def test_rrf_with_k_zero_and_missing_lists() -> None:
    fused = reciprocal_rank_fusion([["x"], [], ["y", "x"]], k=0)
    assert fused == {"x": pytest.approx(1.0 + 0.5), "y": pytest.approx(1.0)}


def test_a_key_repeated_in_one_list_counts_once_at_its_best_rank() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "a"]], k=1)
    assert fused["a"] == pytest.approx(1 / 2)


def test_negative_k_is_rejected() -> None:
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)


def test_ties_break_by_score_then_id() -> None:
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"], ["c"], ["d"]], k=60)
    # a and b tie exactly; c and d tie exactly.
    order = order_by_fused(
        fused, tie_scores={"a": (0.5, 1.0), "b": (0.7, 0.0), "c": (0.2,), "d": (0.2,)}
    )
    assert order == ["b", "a", "c", "d"]


def test_missing_tie_scores_count_as_zero() -> None:
    fused = {"a": 1.0, "b": 1.0, "c": 1.0}
    assert order_by_fused(fused, tie_scores={"c": (0.1,)}) == ["c", "a", "b"]
    assert order_by_fused(fused, tie_ids={"a": "z", "b": "y", "c": "x"}) == ["c", "b", "a"]


ROOT2 = 2.0**0.5


def test_zscore_fusion_hand_computed() -> None:
    # Over the union {a, b, c}: A = (3, 1, 1 [c missing: A's minimum]) and B = (2 [a missing:
    # B's minimum], 4, 2). Each has std 2·sqrt(2)/3, so a list's top key gets z = sqrt(2) and
    # the other two -1/sqrt(2).
    fused = zscore_fusion([[("a", 3.0), ("b", 1.0)], [("b", 4.0), ("c", 2.0)]], [0.5, 0.5])
    assert fused == pytest.approx({"a": 0.5 / ROOT2, "b": 0.5 / ROOT2, "c": -1.0 / ROOT2})
    dense_heavy = zscore_fusion([[("a", 3.0), ("b", 1.0)], [("b", 4.0), ("c", 2.0)]], [0.8, 0.2])
    assert order_by_fused(dense_heavy)[0] == "a"


def test_zscore_fusion_ignores_flat_and_empty_lists_and_checks_weights() -> None:
    assert zscore_fusion([[("a", 1.0), ("b", 1.0)], []], [1.0, 1.0]) == {"a": 0.0, "b": 0.0}
    with pytest.raises(ValueError, match="weights"):
        zscore_fusion([[("a", 1.0)]], [0.5, 0.5])
