"""Each graph node on its own."""

from __future__ import annotations

import pytest

from app.graph.deps import GraphDeps
from app.graph.nodes.approval import enrich_incident, review_payload, route_after_approval
from app.graph.nodes.finalize import finalize
from app.graph.nodes.rag import rag
from app.graph.nodes.rca import rca
from app.graph.nodes.whitelist import whitelist
from app.graph.state import RcaState
from app.rag.retrieve import RankedDoc, Retrieval
from app.rca.extractive import ExtractiveGenerator


class ListRetriever:
    """A retriever returning fixed docs, recording the queries it was asked."""

    def __init__(self, docs: list[RankedDoc], low_confidence: bool = False) -> None:
        self.docs = docs
        self.low_confidence = low_confidence
        self.queries: list[tuple[str, int]] = []

    def retrieve(self, query: str, limit: int) -> Retrieval:
        self.queries.append((query, limit))
        return Retrieval(query=query, docs=self.docs[:limit], low_confidence=self.low_confidence)


DOC = RankedDoc(
    id="error-doc-aaaaaaaaaaaaaaaa",
    text="Error: PAY-408 PAYMENT_TIMEOUT\nCause: provider slow",
    metadata={
        "error_code": "PAY-408",
        "error_name": "PAYMENT_TIMEOUT",
        "symptoms": "payments hang.",
        "cause": "the provider is slow.",
        "solution": "Bound timeouts. Fail over.",
        "validation": "p95 under the timeout.",
        "evidence": "ReadTimeout in the client.",
    },
    collection="kb",
    dense_score=0.71,
    dense_rank=1,
)


def deps_with(retriever: ListRetriever) -> GraphDeps:
    return GraphDeps(
        retriever=retriever,
        generator=ExtractiveGenerator(),
        knowledge_version=lambda: "kb-test",
        top_k=3,
    )


async def test_rag_records_exactly_what_was_retrieved() -> None:
    retriever = ListRetriever([DOC])
    update = await rag(
        {"incident": {"error_code": "PAY-408", "message": "payment hung"}}, deps_with(retriever)
    )
    assert retriever.queries == [("PAY-408 payment hung", 3)]
    assert update["query"] == "PAY-408 payment hung"
    assert update["low_confidence"] is False
    (doc,) = update["similar_error_docs"]
    assert doc["id"] == DOC.id and doc["content"] == DOC.text
    assert doc["similarity"] == pytest.approx(0.71)
    assert doc["metadata"]["error_code"] == "PAY-408"
    assert doc["why"]["dense_rank"] == 1


async def test_rca_node_writes_a_draft_with_provenance() -> None:
    state: RcaState = {
        "incident": {"error_code": "PAY-408", "message": "payment hung"},
        "similar_error_docs": [
            {"id": DOC.id, "content": DOC.text, "similarity": 0.71, "metadata": DOC.metadata}
        ],
        "low_confidence": False,
    }
    update = await rca(state, deps_with(ListRetriever([])))
    draft = update["rca"]
    assert draft["outcome"] == "analysis"
    assert draft["provenance"] == {
        "generator": "extractive",
        "prompt_version": draft["provenance"]["prompt_version"],
        "knowledge_version": "kb-test",
        "fallback_reason": None,
    }
    assert draft["hypotheses"][0]["error_code"] == "PAY-408"
    assert draft["remediation"] == ["Bound timeouts", "Fail over"]


def test_whitelist_drops_unsupplied_ids_and_flags_claims() -> None:
    state: RcaState = {
        "incident": {"message": "payment hung", "logs": ["ReadTimeout after 30s"]},
        "similar_error_docs": [{"id": DOC.id}],
        "rca": {
            "hypotheses": [
                {
                    "statement": "s",
                    "claims": [
                        {
                            "text": "a",
                            "evidence": [{"id": DOC.id}, {"id": "error-doc-ffffffffffffffff"}],
                        },
                        {"text": "b", "evidence": [{"id": "invented"}]},
                        {
                            "text": "c",
                            "evidence": [{"id": "incident:log:1"}, {"id": "incident:log:9"}],
                        },
                    ],
                }
            ]
        },
    }
    update = whitelist(state)
    claims = update["rca"]["hypotheses"][0]["claims"]
    assert [c["evidence"] for c in claims] == [[{"id": DOC.id}], [], [{"id": "incident:log:1"}]]
    assert [c["supported"] for c in claims] == [True, False, True]
    assert update["dropped_evidence_ids"] == [
        "error-doc-ffffffffffffffff",
        "invented",
        "incident:log:9",
    ]


def test_review_payload_and_routing() -> None:
    state: RcaState = {
        "incident_id": "i-1",
        "incident": {"message": "m"},
        "rca": {"summary": "s"},
        "similar_error_docs": [{"id": "d"}],
        "dropped_evidence_ids": ["x"],
    }
    payload = review_payload(state)
    assert payload["allowed_actions"] == ["approve", "reject", "edit", "reanalyze"]
    assert payload["dropped_evidence_ids"] == ["x"] and payload["rca"] == {"summary": "s"}
    assert route_after_approval({"decision": {"action": "reanalyze"}}) == "collect"  # type: ignore[typeddict-item]
    assert route_after_approval({"decision": {"action": "approve"}}) == "finalize"  # type: ignore[typeddict-item]


def test_enrich_incident_appends_reviewer_evidence() -> None:
    incident = {"message": "m", "logs": ["a"]}
    decision = {"added_evidence": {"logs": ["b"], "stack_trace": "trace", "note": "look at db"}}
    enriched = enrich_incident(incident, decision)
    assert enriched == {
        "message": "m",
        "logs": ["a", "b"],
        "stack_trace": "trace",
        "reviewer_notes": ["look at db"],
    }
    assert incident == {"message": "m", "logs": ["a"]}


def test_finalize_keeps_original_beside_edit() -> None:
    base: RcaState = {"rca": {"summary": "original"}}
    edited = finalize(
        {**base, "decision": {"action": "edit", "rca": {"summary": "edited"}, "decided_at": "t"}}
    )
    assert edited == {"status": "approved", "final_rca": {"summary": "edited"}, "decided_at": "t"}
    approved = finalize({**base, "decision": {"action": "approve", "decided_at": "t"}})
    assert approved["final_rca"] == {"summary": "original"}
    rejected = finalize({**base, "decision": {"action": "reject", "decided_at": "t"}})
    assert rejected == {"status": "rejected", "decided_at": "t"}
