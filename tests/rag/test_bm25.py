import pytest

from app.core.config import Settings
from app.rag.bm25 import KeywordIndex
from app.rag.ingest import KnowledgeChunk, load_error_docs


@pytest.fixture(scope="module")
def index() -> KeywordIndex:
    return KeywordIndex(load_error_docs(Settings(_env_file=None).knowledge_path).chunks)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("pay 408", "PAY-408"),
        ("PAY408", "PAY-408"),
        ("PAY-408", "PAY-408"),
        ("pos-503-plu", "POS-503-PLU"),
        ("co500", "CO-500"),  # POS-500-CHECKOUT mentions CO-500 as a contrast
        ("POS 422 QTY", "POS-422-QTY"),
    ],
)
def test_codes_rank_their_doc_first(index: KeywordIndex, query: str, code: str) -> None:
    assert index.search(query, 3)[0].chunk.metadata["error_code"] == code


def test_scores_are_positive_and_descending(index: KeywordIndex) -> None:
    hits = index.search("payment timeout at checkout", 10)
    scores = [h.score for h in hits]
    assert scores and all(s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_unknown_words_and_empty_index_find_nothing(index: KeywordIndex) -> None:
    assert index.search("LDAP kerberos", 5) == []
    assert index.search("   ", 5) == []
    assert index.search("payment", 0) == []
    assert KeywordIndex().search("payment", 5) == []
    assert len(KeywordIndex()) == 0


def test_with_codes_uses_the_metadata(index: KeywordIndex) -> None:
    found = index.with_codes(["pay-408", "ch-502", "pay-408", "zz-999"])
    assert [c.metadata["error_code"] for c in found] == ["PAY-408", "CH-502"]


def test_rebuild_replaces_the_corpus() -> None:
    index = KeywordIndex([KnowledgeChunk("a", "alpha widget", {})])
    assert [h.chunk.id for h in index.search("widget", 5)] == ["a"]
    index.rebuild([KnowledgeChunk("b", "beta gadget", {})])
    assert index.search("widget", 5) == []
    assert [h.chunk.id for h in index.search("gadgets", 5)] == ["b"]
