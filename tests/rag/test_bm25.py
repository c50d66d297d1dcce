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


def test_score_documents_scores_the_docs_asked_for(index: KeywordIndex) -> None:
    query = "payment provider timeout at checkout"
    ranked = {h.chunk.id: h for h in index.search(query, 100)}
    every_id = [c.id for c in load_error_docs(Settings(_env_file=None).knowledge_path).chunks]  # type: ignore[call-arg]
    scored = index.score_documents(query, [*every_id, "no-such-doc"])
    assert set(scored) == set(every_id)  # unknown ids are left out
    for doc_id, hit in scored.items():
        if doc_id in ranked:  # the same score and coverage search() gave it
            assert hit.score == pytest.approx(ranked[doc_id].score)
            assert hit.coverage == pytest.approx(ranked[doc_id].coverage)
        else:  # a doc sharing no query word scores 0
            assert hit.score == 0.0
    unrelated = index.score_documents("LDAP kerberos", every_id[:2])
    assert len(unrelated) == 2 and all(h.score == 0.0 for h in unrelated.values())
    assert KeywordIndex().score_documents("payment", ["a"]) == {}


def test_one_shared_word_covers_nothing_of_a_longer_query() -> None:
    inventory = KnowledgeChunk("inv", "The inventory service is down or its pool is exhausted.", {})
    tills = KnowledgeChunk("pos", "Tills reject sales; tills show an error.", {})
    index = KeywordIndex([inventory, tills, KnowledgeChunk("x", "Unrelated words here.", {})])
    # "down" is the inventory entry's only word in common with the query: no coverage.
    assert index.score_documents("tills down", ["inv"])["inv"].coverage == 0.0
    assert index.score_documents("inventory down", ["inv"])["inv"].coverage == pytest.approx(1.0)
    # A one-word query needs only its word.
    assert index.score_documents("down", ["inv"])["inv"].coverage == pytest.approx(1.0)


def test_document_coverage_is_the_share_of_the_docs_own_words_in_the_query() -> None:
    template = KnowledgeChunk("get", '<*> "GET <*>" status: <*> len: <*> time: <*>.<*>', {})
    other = KnowledgeChunk("post", '<*> "POST <*>" status: <*> len: <*> time: <*>.<*>', {})
    prose = KnowledgeChunk("note", "The metadata service answers block device mapping calls.", {})
    index = KeywordIndex([template, other, prose])
    line = (
        '10.11.21.123,10.11.10.1 "GET /latest/meta-data/block-device-mapping/ami HTTP/1.1" '
        "status: 200 len: 119 time: 0.0009408"
    )
    hits = {h.chunk.id: h for h in index.search(line, 5)}
    # Every word of the GET template is in the line, though the line says much more.
    assert hits["get"].document_coverage == pytest.approx(1.0)
    assert hits["get"].coverage < 0.5
    assert hits["post"].document_coverage < 1.0
    assert 0.0 < hits["note"].document_coverage < 1.0
    scored = index.score_documents(line, ["get"])["get"]
    assert scored.document_coverage == pytest.approx(1.0)
