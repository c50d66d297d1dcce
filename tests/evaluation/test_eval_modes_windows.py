"""Windowed dense retrieval, max-pooling, the tuned BM25 text and the z-score blend."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from tests.fakes import CountingEmbedder, HashEmbedder

from app.core.errors import ConfigurationError
from app.evaluation.modes import (
    TUNED_BM25,
    BlendRanker,
    Bm25Ranker,
    Corpus,
    ModeOptions,
    Ranked,
    zscore_blend,
)
from app.evaluation.windows import (
    Offsets,
    WindowRanker,
    build_windows,
    max_by_doc,
    split_windows,
    window_spans,
    wordpiece_offsets,
)

ROOT2 = math.sqrt(2.0)


def word_offsets(texts: Sequence[str]) -> list[Offsets]:
    """Whitespace tokens, so window sizes in tests count words."""
    return [[m.span() for m in re.finditer(r"\S+", text)] for text in texts]


# --- window spans and texts -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_tokens", "size", "stride", "expected"),
    [
        (0, 4, 2, [(0, 0)]),
        (3, 4, 2, [(0, 3)]),
        (4, 4, 2, [(0, 4)]),
        (5, 4, 2, [(0, 4), (2, 5)]),
        (8, 4, 2, [(0, 4), (2, 6), (4, 8)]),
        (9, 4, 2, [(0, 4), (2, 6), (4, 8), (6, 9)]),
        (8, 4, 4, [(0, 4), (4, 8)]),
        (250, 96, 48, [(0, 96), (48, 144), (96, 192), (144, 240), (192, 250)]),
    ],
)
def test_window_spans(
    n_tokens: int, size: int, stride: int, expected: list[tuple[int, int]]
) -> None:
    assert window_spans(n_tokens, size, stride) == expected


@pytest.mark.parametrize(("size", "stride"), [(0, 1), (4, 0), (4, 5), (-1, -1)])
def test_window_spans_refuse_gaps_and_empty_windows(size: int, stride: int) -> None:
    with pytest.raises(ValueError, match="stride"):
        window_spans(10, size, stride)


def test_each_window_is_the_title_then_a_slice_of_the_body() -> None:
    body = "alpha  beta gamma delta epsilon"
    (offsets,) = word_offsets([body])
    assert split_windows("Title", body, offsets, 4, 2) == [
        "Title alpha  beta gamma delta",  # the body's own spacing is kept
        "Title gamma delta epsilon",
    ]


def test_short_bodies_are_one_window_and_no_window_is_empty() -> None:
    body = "one two"
    (offsets,) = word_offsets([body])
    assert split_windows("T", body, offsets, 4, 2) == ["T one two"]
    assert split_windows("", body, offsets, 4, 2) == ["one two"]
    assert split_windows("  T  ", body, offsets, 4, 2) == ["T one two"]
    # Without body tokens the title alone is the doc's one window.
    assert split_windows("T", "   ", [], 4, 2) == ["T"]


def test_build_windows_records_each_docs_first_window() -> None:
    texts, starts = build_windows(
        ["A", "B", "C"], ["w1 w2 w3 w4 w5", "x", ""], word_offsets, size=4, stride=2
    )
    assert texts == ["A w1 w2 w3 w4", "A w3 w4 w5", "B x", "C"]
    assert starts.tolist() == [0, 2, 3]


def test_windows_count_model_word_pieces() -> None:
    # "unbelievably" is five word pieces: un ##bel ##ie ##va ##bly
    body = "unbelievably fast"
    (offsets,) = wordpiece_offsets([body])
    assert len(offsets) == 6
    assert split_windows("T", body, offsets, 4, 4) == ["T unbelieva", "T bly fast"]
    assert wordpiece_offsets([""]) == [[]]


# --- max-pooling --------------------------------------------------------------------------------


def test_a_doc_scores_its_best_window() -> None:
    scores = np.array([0.1, 0.5, 0.3, 0.2, 0.9], dtype=np.float32)
    pooled = max_by_doc(scores, np.array([0, 2, 4]))
    assert pooled.tolist() == pytest.approx([0.5, 0.3, 0.9])
    assert max_by_doc(scores, np.array([0])).tolist() == pytest.approx([0.9])
    assert max_by_doc(np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)).size == 0


def windowed_corpus() -> Corpus:
    long_body = "filler " * 20 + "chiller gateway outage"
    return Corpus(
        ids=["d1", "d2"],
        texts=[f"Cooling {long_body}", "Payments card terminal declined"],
        key="k",
        titles=["Cooling", "Payments"],
        bodies=[long_body, "card terminal declined"],
    )


def test_window_ranker_finds_the_tail_and_caches_by_window_params(tmp_path: Path) -> None:
    corpus = windowed_corpus()
    first = CountingEmbedder()
    ranker = WindowRanker(first, corpus, tmp_path, size=4, stride=2, tokenize=word_offsets)
    # 23 body words: starts 0, 2, … 18, 20 -> 11 windows, plus one for the short doc.
    assert first.documents_embedded == 12
    assert ranker.starts.tolist() == [0, 11]
    (ranked,) = ranker.rank(["chiller gateway outage"], 2)
    assert ranked[0][0] == "d1"
    expected = HashEmbedder().embed_query("Cooling chiller gateway outage")
    query = HashEmbedder().embed_query("chiller gateway outage")
    assert ranked[0][1] == pytest.approx(float(expected @ query), abs=1e-6)
    assert [p.name for p in tmp_path.glob("*.npy")] == ["hash-embedder-384-k-win4s2.npy"]

    again = CountingEmbedder()
    WindowRanker(again, corpus, tmp_path, size=4, stride=2, tokenize=word_offsets)
    assert again.documents_embedded == 0
    other = CountingEmbedder()
    WindowRanker(other, corpus, tmp_path, size=8, stride=4, tokenize=word_offsets)
    assert other.documents_embedded > 0
    assert len(list(tmp_path.glob("*.npy"))) == 2 and not list(tmp_path.glob("*.tmp*"))


# --- corpus text for the tuned BM25 -------------------------------------------------------------


def test_title_repeats_and_untitled_corpora() -> None:
    corpus = Corpus(
        ["a", "b"], ["T body", "body2"], "k", titles=["T", ""], bodies=["body", "body2"]
    )
    assert corpus.texts_with_title_repeated(1) is corpus.texts
    assert corpus.texts_with_title_repeated(3) == ["T T T body", "body2"]
    untitled = Corpus(["a"], ["just text"], "k")
    assert untitled.titles_and_bodies() == ([""], ["just text"])
    assert untitled.texts_with_title_repeated(3) == ["just text"]


def test_tuned_bm25_weights_the_title() -> None:
    titles = ["Kinase inhibitors", "Tumours", "Cardiac"]
    bodies = ["in tumours", "a kinase review of kinase work", "review of the heart"]
    corpus = Corpus(
        ids=["d1", "d2", "d3"],
        texts=[f"{t} {b}" for t, b in zip(titles, bodies, strict=True)],
        key="k",
        titles=titles,
        bodies=bodies,
    )
    # Plain: d2 says "kinase" twice. Tuned: d1's title says it three times.
    assert Bm25Ranker(corpus).rank(["kinase"], 2)[0][0][0] == "d2"
    assert Bm25Ranker(corpus, TUNED_BM25).rank(["kinase"], 2)[0][0][0] == "d1"


# --- z-score blend ------------------------------------------------------------------------------


def as_dict(ranked: Ranked) -> dict[str, float]:
    return dict(ranked)


def assert_ranked(got: Ranked, expected: Ranked) -> None:
    assert [d for d, _ in got] == [d for d, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected])


def test_zscore_blend_hand_computed() -> None:
    # Over the union {a, b, c}: A = (3, 1, 1 [c missing: A's minimum]) and B = (2 [a missing:
    # B's minimum], 4, 2). Each has mean 5/3 or 8/3 and std 2·sqrt(2)/3, so the top doc of a
    # list gets z = sqrt(2) and the other two get -1/sqrt(2).
    a_list = [("a", 3.0), ("b", 1.0)]
    b_list = [("b", 4.0), ("c", 2.0)]
    even = zscore_blend([a_list, b_list], [0.5, 0.5])
    assert [d for d, _ in even] == ["a", "b", "c"]  # a and b tie; the id decides
    assert as_dict(even) == pytest.approx({"a": 0.5 / ROOT2, "b": 0.5 / ROOT2, "c": -1.0 / ROOT2})
    skewed = zscore_blend([a_list, b_list], [0.75, 0.25])
    assert [d for d, _ in skewed] == ["a", "b", "c"]
    assert as_dict(skewed) == pytest.approx(
        {"a": 1.25 / ROOT2, "b": -0.25 / ROOT2, "c": -1.0 / ROOT2}
    )


def test_zscore_blend_ignores_lists_without_spread() -> None:
    flat = [("a", 2.0), ("b", 2.0)]
    ordered = [("b", 1.0), ("a", 0.0)]
    assert_ranked(zscore_blend([flat, ordered], [0.9, 0.1]), [("b", 0.1), ("a", -0.1)])
    # A one-doc list fills every other doc with its only score: no spread, no say.
    assert_ranked(
        zscore_blend([[("a", 1.0), ("b", 0.0)], [("c", 5.0)]], [0.5, 0.5]),
        [("a", 0.5 * ROOT2), ("b", -0.5 / ROOT2), ("c", -0.5 / ROOT2)],
    )
    assert_ranked(
        zscore_blend([[], [("x", 1.0), ("y", 0.0)]], [0.5, 0.5]), [("x", 0.5), ("y", -0.5)]
    )
    assert zscore_blend([[("a", 5.0)], []], [0.5, 0.5]) == [("a", 0.0)]
    assert zscore_blend([[], []], [0.5, 0.5]) == []


def test_zscore_blend_keeps_a_repeated_docs_first_score_and_checks_weights() -> None:
    assert_ranked(
        zscore_blend([[("a", 1.0), ("b", 0.0), ("a", -5.0)]], [1.0]), [("a", 1.0), ("b", -1.0)]
    )
    with pytest.raises(ValueError, match="weights"):
        zscore_blend([[("a", 1.0)]], [0.5, 0.5])


class FixedRanker:
    def __init__(self, ranked: Ranked) -> None:
        self.ranked = ranked
        self.asked: list[int] = []

    def rank(self, queries: Sequence[str], k: int) -> list[Ranked]:
        self.asked.append(k)
        return [self.ranked[:k] for _ in queries]


def test_blend_ranker_reads_each_part_to_depth() -> None:
    first = FixedRanker([("a", 3.0), ("b", 1.0)])
    second = FixedRanker([("b", 4.0), ("c", 2.0)])
    ranker = BlendRanker([first, second], [0.75, 0.25], depth=50)
    (ranked,) = ranker.rank(["q"], 1)
    assert first.asked == second.asked == [50]
    assert_ranked(ranked, [("a", 1.25 / ROOT2)])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"blend_weight": 1.5},
        {"blend_weight": -0.1},
        {"window_tokens": 4, "window_stride": 5},
        {"window_stride": 0},
        {"rrf_k": -1},
        {"depth": 0},
    ],
)
def test_mode_options_are_checked(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        ModeOptions(**kwargs)  # type: ignore[arg-type]
