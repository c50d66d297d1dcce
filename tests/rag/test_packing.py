import pytest

from app.rag.packing import (
    Budgets,
    Complexity,
    classify_complexity,
    default_source_id,
    pack_context,
)
from app.rag.retrieve import RankedDoc


def doc(doc_id: str, text: str, **metadata: str) -> RankedDoc:
    return RankedDoc(id=doc_id, text=text, metadata=dict(metadata), collection="c")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("PAY-408 payment timeout", Complexity.SIMPLE),
        ("why does checkout fail?", Complexity.SIMPLE),
        ("one two three four five six seven eight nine ten", Complexity.SIMPLE),
        ("one two three four five six seven eight nine ten eleven", Complexity.MEDIUM),
        ("compare PAY-408 and POS-502-CARD", Complexity.MEDIUM),
        ("PAY-408 vs POS-502-CARD", Complexity.MEDIUM),
        ("why? how?", Complexity.MEDIUM),
        (" ".join(["word"] * 28), Complexity.MEDIUM),
        (" ".join(["word"] * 29), Complexity.COMPLEX),
    ],
)
def test_complexity_classes(query: str, expected: Complexity) -> None:
    assert classify_complexity(query) == expected


def test_budgets_map_classes_to_tokens() -> None:
    budgets = Budgets(simple=1, medium=2, complex=3)
    assert [budgets.tokens(c) for c in Complexity] == [1, 2, 3]


def test_greedy_packing_stops_at_the_first_overflow() -> None:
    docs = [doc("a", "x" * 30), doc("b", "y" * 10), doc("c", "z" * 5), doc("d", "w" * 1)]
    packed = pack_context(docs, budget_tokens=10)  # 40 characters
    assert [d.id for d in packed.chunks] == ["a", "b"]
    assert packed.used_chars == 40
    assert packed.budget_chars == 40


def test_oversized_top_chunk_is_always_kept() -> None:
    packed = pack_context([doc("a", "x" * 1000), doc("b", "y")], budget_tokens=1)
    assert [d.id for d in packed.chunks] == ["a"]


def test_empty_texts_are_skipped() -> None:
    docs = [doc("empty", ""), doc("blank", "   \n"), doc("a", "x" * 8), doc("b", "")]
    packed = pack_context(docs, budget_tokens=2)
    assert [d.id for d in packed.chunks] == ["a"]
    assert pack_context([doc("e", "")], budget_tokens=100).chunks == []


def test_citations_are_the_sorted_set_of_non_null_sources() -> None:
    docs = [
        doc("a", "aaa", error_code="PAY-408"),
        doc("b", "bbb", error_code="CO-500"),
        doc("c", "ccc", error_code="PAY-408"),
        doc("d", "ddd"),
        doc("e", "eee", source_id="runbook-7", error_code="INV-503"),
    ]
    packed = pack_context(docs, budget_tokens=100)
    assert packed.citations == ["CO-500", "PAY-408", "runbook-7"]
    assert default_source_id(doc("f", "f", source="notes.txt")) == "notes.txt"
    assert default_source_id(doc("g", "g")) is None
