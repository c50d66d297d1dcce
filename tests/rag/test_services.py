"""Services of knowledge docs: parsing, exact matching, the boost and the added docs."""

from __future__ import annotations

import json
from typing import Any

from app.rag.ingest import KnowledgeChunk, parse_error_docs
from app.rag.markdown import parse_runbook
from app.rag.services import ServiceCatalogue, apply_service, service_match
from app.rag.signals import parse_service_line, read_signals

TWO_DOCS = """Error: CO-500 CHECKOUT_SERVICE_CRASH
Component: web shop checkout
Service: checkout-service (aliases: checkout, web-shop-checkout)
Symptoms: /checkout returns HTTP 500.
---
Error: PAY-408 PAYMENT_TIMEOUT
Component: payment provider integration called by checkout
Service: payment-service (aliases: payments)
Symptoms: payments fail with HTTP 408 or 504.
"""


def _chunks() -> list[KnowledgeChunk]:
    return parse_error_docs(TWO_DOCS).chunks


def _state_doc(chunk: KnowledgeChunk, similarity: float, fused: float) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "content": chunk.text,
        "similarity": similarity,
        "metadata": dict(chunk.metadata),
        "collection": "kb",
        "why": {"fused_score": fused},
    }


def test_service_line_with_and_without_aliases() -> None:
    assert parse_service_line("pos-api (aliases: pos, till-api)") == ["pos-api", "pos", "till-api"]
    assert parse_service_line("Inventory-Service") == ["inventory-service"]
    assert parse_service_line("") == []


def test_error_docs_store_the_service_and_its_aliases() -> None:
    checkout, payment = _chunks()
    assert checkout.metadata["service"] == "checkout-service"
    assert json.loads(str(checkout.metadata["services"])) == [
        "checkout-service",
        "checkout",
        "web-shop-checkout",
    ]
    # The Service line is its own field, not a continuation of Component.
    assert checkout.metadata["component"] == "web shop checkout"
    assert read_signals(payment.metadata)["services"] == ["payment-service", "payments"]


def test_runbook_front_matter_declares_services() -> None:
    text = (
        "---\nservice: payment-service\nservices: [payments, psp-adapter]\n---\n# Timeouts\nbody\n"
    )
    (chunk,) = parse_runbook(text, "payments.md", count_tokens=len).chunks
    assert chunk.metadata["service"] == "payment-service"
    assert json.loads(str(chunk.metadata["services"])) == [
        "payment-service",
        "payments",
        "psp-adapter",
    ]
    assert chunk.metadata["line"] == 5  # front matter keeps the line numbers


def test_match_is_exact_not_substring() -> None:
    checkout, payment = _chunks()
    catalogue = ServiceCatalogue.from_chunks(_chunks())
    assert service_match("Checkout", checkout.metadata, catalogue) == "match"
    assert service_match("checkout", payment.metadata, catalogue) == "other"
    assert service_match("pos-payments", payment.metadata, catalogue) == "unknown"
    assert service_match(None, payment.metadata, catalogue) == "unknown"


def test_matching_doc_is_boosted_and_others_marked() -> None:
    checkout, payment = _chunks()
    catalogue = ServiceCatalogue.from_chunks(_chunks())
    docs = [_state_doc(payment, 0.6, 0.033), _state_doc(checkout, 0.55, 0.030)]
    ranked = apply_service(docs, "web-shop-checkout", catalogue)
    assert [d["id"] for d in ranked] == [checkout.id, payment.id]
    assert [d["why"]["service_match"] for d in ranked] == ["match", "other"]
    # No service: nothing moves.
    assert [d["id"] for d in apply_service(docs, None, catalogue)] == [payment.id, checkout.id]


def test_docs_of_the_service_that_retrieval_missed_are_added_with_their_similarity() -> None:
    checkout, payment = _chunks()
    catalogue = ServiceCatalogue.from_chunks(_chunks())
    docs = [_state_doc(checkout, 0.6, 0.033)]
    ranked = apply_service(
        docs, "payments", catalogue, collection="kb", similarity=lambda ids: dict.fromkeys(ids, 0.3)
    )
    added = next(d for d in ranked if d["id"] == payment.id)
    assert added["why"]["added_by"] == "service" and added["similarity"] == 0.3
    assert added["collection"] == "kb"
    assert ranked[0]["id"] == payment.id


def test_a_service_that_starts_a_declared_name_is_the_larger_system() -> None:
    from app.rag.services import LARGER_SYSTEM, OTHER, UNKNOWN

    catalogue = ServiceCatalogue.from_chunks(_chunks())
    payment = next(c for c in _chunks() if c.metadata.get("error_code") == "PAY-408")
    # ``web-shop`` opens ``web-shop-checkout`` (an alias of CO-500): part of it, on any doc.
    assert service_match("web-shop", payment.metadata, catalogue) == LARGER_SYSTEM
    assert service_match("checkout", payment.metadata, catalogue) == OTHER
    # A name with a declared name's telling parts (``payment`` is ``payments`` typed without
    # its s), or a stranger, is not.
    assert service_match("payment", payment.metadata, catalogue) != LARGER_SYSTEM
    assert service_match("web-portal", payment.metadata, catalogue) == UNKNOWN


def test_a_service_typed_with_a_typo_or_a_release_matches_its_docs() -> None:
    catalogue = ServiceCatalogue.from_chunks(_chunks())
    payment = next(c for c in _chunks() if c.metadata.get("error_code") == "PAY-408")
    for typed in ("payment-servce", "payments-v3", "Payment-Service"):
        assert service_match(typed, payment.metadata, catalogue) == "match", typed
        assert [c.id for c in catalogue.chunks_for(typed)] == [payment.id], typed
    assert not catalogue.knows("loyalty-api")
