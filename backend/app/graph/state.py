"""The graph state: plain, JSON-serialisable data only."""

from __future__ import annotations

from typing import Any, TypedDict


class RcaState(TypedDict, total=False):
    """Everything one incident run knows, checkpointed after every node.

    ``similar_error_docs`` is exactly what the RCA saw: id, content, similarity, metadata and
    why each doc ranked. ``collected_evidence`` holds the items the ``collect`` node gathered
    (``CollectedItem.as_dict``: id, source, kind, summary, query, range, points or lines) and
    ``sources_unavailable`` the sources it could not read (``{"source", "reason"}``); both are
    absent when no source is configured. ``retrieval_low_confidence`` is the retrieval gate's
    decision; ``diagnosis`` (``app.rca.diagnosis``) weighs each retrieved family against the
    incident's evidence and makes the final one, ``low_confidence``. ``drafts`` keeps every
    earlier draft when a reviewer asks for re-analysis. ``injection_flags`` lists the
    instruction-like phrases in the incident's text (``app.evidence.injection``), set by ``rag``.
    """

    incident_id: str
    incident: dict[str, Any]
    collected_evidence: list[dict[str, Any]]
    sources_unavailable: list[dict[str, str]]
    collected_at: str
    query: str
    similar_error_docs: list[dict[str, Any]]
    similar_past_incidents: list[dict[str, Any]]
    low_confidence: bool
    retrieval_low_confidence: bool
    retrieval_notes: list[str]
    diagnosis: dict[str, Any] | None
    rca: dict[str, Any]
    dropped_evidence_ids: list[str]
    injection_flags: list[dict[str, str]]
    unsupported_citations: list[dict[str, Any]]
    decision: dict[str, Any]
    final_rca: dict[str, Any]
    status: str
    drafts: list[dict[str, Any]]
    created_at: str
    analyzed_at: str
    decided_at: str
