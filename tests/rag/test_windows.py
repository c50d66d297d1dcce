"""Windows of long documents: spans, texts, and chunks that name their parent."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from app.rag.windows import (
    PARENT_KEY,
    Offsets,
    split_windows,
    window_chunks,
    window_spans,
    wordpiece_offsets,
)


def word_offsets(texts: Sequence[str]) -> list[Offsets]:
    """Whitespace tokens, so window sizes in tests count words."""
    return [[m.span() for m in re.finditer(r"\S+", text)] for text in texts]


@pytest.mark.parametrize(
    ("n_tokens", "size", "stride", "expected"),
    [
        (0, 4, 2, [(0, 0)]),
        (3, 4, 2, [(0, 3)]),
        (4, 4, 2, [(0, 4)]),
        (5, 4, 2, [(0, 4), (2, 5)]),
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
    assert split_windows("", body, offsets, 10, 5) == [body]
    assert split_windows("Only title", "", [], 4, 2) == ["Only title"]


def test_a_short_doc_stays_one_chunk_and_a_long_one_becomes_windows() -> None:
    (short,) = window_chunks("d1", "T", "one two", {"k": 1}, size=4, stride=2, offsets=None)
    assert (short.id, short.text) == ("d1", "T one two")
    assert short.metadata == {"k": 1, PARENT_KEY: "d1", "title": "T"}
    body = "a b c d e f"
    (offsets,) = word_offsets([body])
    windows = window_chunks("d2", "T", body, size=4, stride=2, offsets=offsets)
    assert [w.id for w in windows] == ["d2#w0", "d2#w1"]
    assert [w.text for w in windows] == ["T a b c d", "T c d e f"]
    assert {w.metadata[PARENT_KEY] for w in windows} == {"d2"}


def test_windows_count_model_word_pieces() -> None:
    (pieces,) = wordpiece_offsets(["unbelievably long"])
    assert len(pieces) > 2  # word pieces, not words
    assert pieces[0][0] == 0
