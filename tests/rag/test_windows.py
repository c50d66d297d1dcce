"""Windows of long documents: spans, texts, and chunks that name their parent."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from app.rag.ingest import KnowledgeChunk
from app.rag.windows import (
    PARENT_KEY,
    WINDOW_END_KEY,
    WINDOW_START_KEY,
    Offsets,
    is_window,
    sentence_spans,
    window_chunks,
    window_spans,
    with_windows,
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


def texts(title: str, body: str, size: int, stride: int) -> list[str]:
    (offsets,) = word_offsets([body])
    chunks = window_chunks("d", title, body, size=size, stride=stride, offsets=offsets)
    return [c.text for c in chunks if is_window(c.metadata)]


def test_each_window_is_the_title_then_a_slice_of_the_body() -> None:
    body = "alpha  beta gamma delta epsilon"
    assert texts("Title", body, 4, 2) == [
        "Title alpha  beta gamma delta",  # the body's own spacing is kept
        "Title gamma delta epsilon",
    ]
    assert texts("", "a b c d e f g", 2, 2) == ["a b", "c d", "e f", "g"]
    assert texts("", body, 10, 5) == []  # it fits one window: the document alone
    assert texts("Only title", "", 4, 2) == []


def test_knowledge_chunks_keep_their_text_and_gain_windows_of_the_rest() -> None:
    entry = KnowledgeChunk(
        id="error-doc-1",
        text="Error: CO-500 CRASH\n" + " ".join(f"word{n}" for n in range(300)),
        metadata={"error_code": "CO-500"},
    )
    short = KnowledgeChunk(id="error-doc-2", text="Error: X\nshort", metadata={})
    assert with_windows([entry, short], 0, 48) == [entry, short]
    stored = with_windows([entry, short], 96, 48)
    assert stored[:2] == [entry, short]  # the documents as they were, windows after them
    windows = stored[2:]
    assert windows and all(is_window(w.metadata) for w in windows)
    assert {w.metadata[PARENT_KEY] for w in windows} == {"error-doc-1"}
    assert all(w.text.startswith("Error: CO-500 CRASH ") for w in windows)
    assert all(w.metadata["error_code"] == "CO-500" for w in windows)
    assert not is_window(entry.metadata)


def test_a_short_doc_stays_one_chunk_and_a_long_one_gains_windows() -> None:
    (short,) = window_chunks("d1", "T", "one two", {"k": 1}, size=4, stride=2, offsets=None)
    assert (short.id, short.text) == ("d1", "T one two")
    assert short.metadata == {"k": 1, PARENT_KEY: "d1", "title": "T"}
    body = "a b c d e f"
    (offsets,) = word_offsets([body])
    whole, *windows = window_chunks("d2", "T", body, size=4, stride=2, offsets=offsets)
    assert (whole.id, whole.text, is_window(whole.metadata)) == ("d2", "T a b c d e f", False)
    assert [w.id for w in windows] == ["d2#w0", "d2#w1"]
    assert [w.text for w in windows] == ["T a b c d", "T c d e f"]
    assert {w.metadata[PARENT_KEY] for w in windows} == {"d2"}
    assert [(w.metadata[WINDOW_START_KEY], w.metadata[WINDOW_END_KEY]) for w in windows] == [
        (0, 7),
        (4, 11),
    ]


def test_windows_count_model_word_pieces() -> None:
    (pieces,) = wordpiece_offsets(["unbelievably long"])
    assert len(pieces) > 2  # word pieces, not words
    assert pieces[0][0] == 0


def sentences(body: str) -> list[str]:
    return [body[start:end] for start, end in sentence_spans(body)]


def test_sentences_end_at_a_stop_before_a_capital_or_at_a_line_end() -> None:
    body = (
        "Statins lower LDL in most adults. In 12.5% of cases (n = 40) they did not! "
        "Why is that so in those patients? 3 trials say dose.\nSymptoms: pods restart every minute"
    )
    assert sentences(body) == [
        "Statins lower LDL in most adults.",
        "In 12.5% of cases (n = 40) they did not!",  # "12.5" is not a sentence end
        "Why is that so in those patients?",
        "3 trials say dose.\nSymptoms: pods restart every minute",  # a short one joins the next
    ]


def test_a_heading_joins_the_next_sentence_and_one_sentence_is_no_passage() -> None:
    assert sentences("Methods. We enrolled 300 adults across four sites.  Results. None died.") == [
        "Methods. We enrolled 300 adults across four sites.",
        "Results. None died.",  # the body's last words stay, however short
    ]
    assert sentences("A single sentence about one finding, e.g. this one.") == []
    assert sentences("") == []


def test_sentence_passages_sit_beside_the_document_and_its_windows() -> None:
    body = "First finding is stated here in full. Second finding follows it in full."
    (offsets,) = word_offsets([body])
    whole, *passages = window_chunks(
        "d", "T", body, size=8, stride=4, offsets=offsets, sentences=True
    )
    assert whole.id == "d"
    assert [p.id for p in passages] == ["d#w0", "d#w1", "d#w2", "d#s0", "d#s1"]
    assert passages[3].text == "T First finding is stated here in full."
    assert all(is_window(p.metadata) and p.metadata[PARENT_KEY] == "d" for p in passages)
    start, end = passages[4].metadata[WINDOW_START_KEY], passages[4].metadata[WINDOW_END_KEY]
    assert body[start:end] == "Second finding follows it in full."
    entry = KnowledgeChunk(
        id="e",
        text="Error: X\nCause: the discount divides by zero items.\nFix: reject empty baskets.",
        metadata={},
    )
    assert [c.id for c in with_windows([entry], 0, 48, sentences=True)] == ["e", "e#s0", "e#s1"]
