"""The citation checker, the citation_check node and the grounded confidence band."""

from __future__ import annotations

import json

import pytest

from app.core.config import PROJECT_ROOT
from app.graph.nodes.citation_check import check_rca
from app.rag.embedding import MiniLmEmbedder
from app.rag.knowledge import KnowledgeBase
from app.rca.confidence import grounded_band
from app.rca.grounding import CitationChecker, Support, key_tokens, sentences_with_spans

CLAIMS_PATH = PROJECT_ROOT / "data" / "eval" / "claims.jsonl"


@pytest.fixture(scope="module")
def checker(embedder: MiniLmEmbedder) -> CitationChecker:
    return CitationChecker(embedder)


@pytest.fixture(scope="module")
def docs_by_code(knowledge: KnowledgeBase) -> dict[str, str]:
    return {str(c.metadata["error_code"]): c.text for c in knowledge.store.all_chunks()}


def test_sentences_carry_exact_spans() -> None:
    text = "Error: X-100 NAME\nCause: one thing. Another thing; a third\n"
    for sentence, (start, end) in sentences_with_spans(text):
        assert text[start:end] == sentence


def test_key_tokens_cover_codes_exceptions_locations_and_statuses() -> None:
    tokens = key_tokens('PAY-408 ReadTimeout at client.py:42, HTTP 504; File "/a/b/pay.py", line 7')
    assert {"PAY-408", "ReadTimeout", "client.py:42", "504", "pay.py:7"} <= tokens
    assert key_tokens("503s") == key_tokens("The incident shows HTTP 503") == {"503"}


def test_payment_claim_citing_the_checkout_crash_doc_is_unsupported(
    checker: CitationChecker, docs_by_code: dict[str, str]
) -> None:
    claim = "The payment provider did not answer in time, so PAY-408 timeouts hit checkout."
    others = [t for code, t in docs_by_code.items() if code != "CO-500"]
    result = checker.check(claim, docs_by_code["CO-500"], others)
    assert result.support is Support.UNSUPPORTED
    right = checker.check(
        claim, docs_by_code["PAY-408"], [t for c, t in docs_by_code.items() if c != "PAY-408"]
    )
    assert right.support is Support.SUPPORTED
    start, end = right.span
    assert docs_by_code["PAY-408"][start:end] == right.sentence


def test_checker_meets_its_bar_on_the_labelled_pairs(
    checker: CitationChecker, docs_by_code: dict[str, str]
) -> None:
    """P/R of 'supported' verdicts on data/eval/claims.jsonl (thresholds fixed there)."""
    rows = [json.loads(line) for line in CLAIMS_PATH.read_text().splitlines() if line.strip()]
    assert len(rows) >= 30 and sum(not r["supported"] for r in rows) >= 10
    tp = fp = fn = 0
    for row in rows:
        others = [t for code, t in docs_by_code.items() if code != row["doc_code"]]
        verdict = checker.check(row["claim"], docs_by_code[row["doc_code"]], others).support
        predicted = verdict is Support.SUPPORTED
        tp += predicted and row["supported"]
        fp += predicted and not row["supported"]
        fn += (not predicted) and row["supported"]
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert precision >= 0.9 and recall >= 0.8, (precision, recall)


def test_check_rca_removes_unsupported_citations_and_flags_claims(
    checker: CitationChecker, docs_by_code: dict[str, str], knowledge: KnowledgeBase
) -> None:
    chunks = {str(c.metadata["error_code"]): c for c in knowledge.store.all_chunks()}
    docs = [{"id": chunks[code].id, "content": chunks[code].text} for code in ("PAY-408", "CO-500")]
    rca = {
        "confidence": "high",
        "hypotheses": [
            {
                "statement": "s",
                "confidence": "high",
                "claims": [
                    {
                        "text": "The payment provider answered too slowly and requests timed out.",
                        "evidence": [{"id": docs[0]["id"]}, {"id": docs[1]["id"]}],
                    },
                    {
                        "text": "The basket total was computed with a discount divided by zero.",
                        "evidence": [{"id": docs[0]["id"]}],
                    },
                    {
                        "text": "The client logged a ReadTimeout after 30 s",
                        "evidence": [{"id": "incident:log:1"}],
                    },
                ],
            }
        ],
    }
    incident = {
        "message": "payments failing",
        "logs": ["ERROR ReadTimeout after 30 s calling provider"],
    }
    checked, removed = check_rca(rca, docs, incident, checker)
    first, second, third = checked["hypotheses"][0]["claims"]
    assert [c["id"] for c in first["evidence"]] == [docs[0]["id"]]
    assert first["supported"] is True and first["evidence"][0]["support"] == "supported"
    assert second["supported"] is False and second["evidence"] == []
    assert third["supported"] is True
    assert {(r["id"], r["claim"][:20]) for r in removed} == {
        (docs[1]["id"], first["text"][:20]),
        (docs[0]["id"], second["text"][:20]),
    }
    assert checked["confidence"] == "high"


@pytest.mark.parametrize(
    ("band", "supported", "expected"),
    [
        ("high", [True, True, False], "high"),
        ("high", [True, False, False], "medium"),
        ("high", [False, False], "low"),
        ("medium", [False], "low"),
        ("low", [True, False, False], "low"),
        ("insufficient", [False], "insufficient"),
        ("high", [], "high"),
    ],
)
def test_grounded_band(band: str, supported: list[bool], expected: str) -> None:
    assert grounded_band(band, [{"supported": s} for s in supported]) == expected


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLmEmbedder) -> None:
        self.inner = inner
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> object:
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> object:
        return self.inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


LOG_LINE = "ERROR ZeroDivisionError raised in calculate_discount (checkout_service.py:142)"


def test_a_claim_quoting_its_evidence_is_supported_without_embedding(
    embedder: MiniLmEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    checker = CitationChecker(counting)  # type: ignore[arg-type]
    claim = f"The incident shows ZeroDivisionError:   {LOG_LINE.lower()}"
    result = checker.check(claim, f"INFO  GET /health -> 200\n{LOG_LINE}\n")
    assert result.support is Support.SUPPORTED and result.quoted
    assert result.sentence == LOG_LINE and result.score == 1.0
    assert counting.embedded == []


def test_a_quote_with_a_contradicting_code_or_shared_by_another_doc_is_scored(
    embedder: MiniLmEmbedder,
) -> None:
    checker = CitationChecker(CountingEmbedder(embedder))  # type: ignore[arg-type]
    coded = checker.check(f"PAY-408 explains it: {LOG_LINE}", f"CO-500 crash. {LOG_LINE}")
    assert not coded.quoted and coded.support is not Support.SUPPORTED
    shared = checker.check(f"It says {LOG_LINE}", LOG_LINE, alternatives=[f"Also: {LOG_LINE}"])
    assert not shared.quoted


def test_a_short_repeated_fragment_is_not_a_quote(embedder: MiniLmEmbedder) -> None:
    checker = CitationChecker(CountingEmbedder(embedder))  # type: ignore[arg-type]
    assert not checker.check("The checkout returned 500 after a deploy", "500").quoted


def test_an_abstention_names_the_service_as_written_with_its_field_cited(
    checker: CitationChecker,
) -> None:
    from tests.rca.helpers import make_input

    from app.rca.extractive import insufficient_rca

    incident = {"message": "loyalty-service pods crashlooping", "service": "crm/loyalty-service"}
    rca = insufficient_rca(make_input(incident, docs=[], low_confidence=True)).model_dump()
    checked, _ = check_rca(rca, [], incident, checker)
    claims = [c for h in checked["hypotheses"] for c in h["claims"]]
    assert all(c["supported"] for c in claims)
    assert {e["id"] for c in claims for e in c["evidence"]} == {
        "incident:message",
        "incident:service",
    }
