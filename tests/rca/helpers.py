"""Incidents, docs and RCA replies shared by the RCA tests."""

from __future__ import annotations

import json
from typing import Any

from app.rag.ingest import KnowledgeChunk
from app.rag.services import LARGER_SYSTEM
from app.rca.base import RcaInput
from app.rca.candidates import Candidate
from app.rca.diagnosis import Diagnosis, diagnose
from app.rca.evidence import incident_evidence

CHECKOUT_DOC_ID = "error-doc-0123456789abcdef"
CHILLER_DOC_ID = "error-doc-fedcba9876543210"
FOREIGN_DOC_ID = "error-doc-ffffffffffffffff"

CHECKOUT_TEXT = (
    "Error: CO-500 CHECKOUT_SERVICE_CRASH\n"
    "Symptoms: /checkout returns HTTP 500; logs show ZeroDivisionError.\n"
    "Cause: the discount calculation divides by a zero item count.\n"
    "Evidence: ZeroDivisionError raised in checkout_service.py.\n"
    "Solution: return zero discount when the divisor is zero.\n"
    "Validation: the replayed basket gets 200 and no new ZeroDivisionError is logged."
)
CHILLER_TEXT = (
    "Error: CH-502 CHILLER_SERVICE_CRASH\n"
    "Symptoms: the gateway answers 502 for chiller endpoints.\n"
    "Cause: the chiller monitoring process crashed.\n"
    "Solution: restart the monitor and fix the bad sensor payload."
)


def doc_metadata(text: str) -> dict[str, str]:
    """``Field: value`` lines as lower-case metadata keys, with the code split out."""
    meta: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        meta[key.lower()] = value
    code, _, name = meta.pop("error", "").partition(" ")
    return {**meta, "error_code": code, "error_name": name}


def state_doc(doc_id: str, text: str, similarity: float) -> dict[str, Any]:
    """A doc as the ``rag`` node puts it into the state."""
    return {"id": doc_id, "content": text, "similarity": similarity, "metadata": doc_metadata(text)}


def checkout_incident(
    message: str = "ZeroDivisionError while calculating discount",
) -> dict[str, Any]:
    """A checkout crash with a short Python traceback and one log line."""
    return {
        "service": "checkout-service",
        "event": "CHECKOUT_SERVICE_CRASH",
        "message": message,
        "stack_trace": (
            "Traceback (most recent call last):\n"
            '  File "checkout_service.py", line 42, in apply_discount\n'
            "ZeroDivisionError: division by zero"
        ),
        "logs": ["ERROR checkout POST /checkout 500"],
    }


def make_input(
    incident: dict[str, Any] | None = None,
    docs: list[dict[str, Any]] | None = None,
    *,
    low_confidence: bool = False,
) -> RcaInput:
    """What the ``rca`` node would hand a generator."""
    incident = incident or checkout_incident()
    if docs is None:
        docs = [
            state_doc(CHECKOUT_DOC_ID, CHECKOUT_TEXT, 0.5),
            state_doc(CHILLER_DOC_ID, CHILLER_TEXT, 0.3),
        ]
    return RcaInput(
        incident=incident,
        docs=docs,
        incident_evidence=incident_evidence(incident),
        low_confidence=low_confidence,
        knowledge_version="kb-test-1",
    )


def draft_reply(*cited_ids: str, summary: str = "Checkout crashed dividing by zero.") -> str:
    """A valid RCA JSON reply citing ``cited_ids`` (default: the checkout doc and message)."""
    ids = cited_ids or (CHECKOUT_DOC_ID, "incident:message")
    return json.dumps(
        {
            "summary": summary,
            "hypotheses": [
                {
                    "statement": "Probable cause (unconfirmed): zero divisor in apply_discount",
                    "error_code": "CO-500",
                    "confidence": "high",  # self-report: must be ignored
                    "claims": [
                        {
                            "text": "The incident matches the documented division by zero.",
                            "evidence": [{"id": i, "quote": "division by zero"} for i in ids],
                        }
                    ],
                }
            ],
            "ruled_out": [],
            "missing_evidence": ["The basket that failed"],
            "next_checks": ["Replay the basket"],
            "remediation": ["Return zero discount when the divisor is zero"],
        }
    )


def docs(chunks: dict[str, KnowledgeChunk], *pairs: tuple[str, float]) -> list[dict[str, Any]]:
    """The knowledge base's entries in the ``rag`` node's state form, with these similarities."""
    return [
        {
            "id": chunks[code].id,
            "content": chunks[code].text,
            "similarity": similarity,
            "metadata": dict(chunks[code].metadata),
        }
        for code, similarity in pairs
    ]


def marked_larger_system(retrieved: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The docs as retrieval marks them for a ``service`` naming the larger system (web-shop)."""
    for doc in retrieved:
        doc["why"] = {"service_match": LARGER_SYSTEM}
    return retrieved


def by_code(candidates: list[Candidate]) -> dict[str, Candidate]:
    """Diagnosis candidates by family."""
    return {c.key: c for c in candidates}


def kinds(hits: list[Any]) -> set[str]:
    """The kinds of some signal hits."""
    return {h.kind for h in hits}


def diagnosed(
    chunks: dict[str, KnowledgeChunk], incident: dict[str, Any], *pairs: tuple[str, float]
) -> Diagnosis:
    """The diagnosis of ``incident`` over these knowledge-base entries, retrieval gate passed."""
    return diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
