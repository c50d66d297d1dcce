"""The ``rag`` node: retrieve the knowledge most similar to the incident."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from app.core.metrics import LOW_CONFIDENCE
from app.evidence.injection import find_injections
from app.graph.deps import GraphDeps
from app.graph.state import RcaState
from app.rag.query import NOTHING_TO_SEARCH, with_collected_logs
from app.rag.retrieve import Retrieval
from app.rag.services import ServiceCatalogue, apply_service, dense_similarities


def _retrieve(
    query: str, incident: dict[str, Any], incident_id: str | None, deps: GraphDeps
) -> tuple[Retrieval, list[dict[str, Any]], list[dict[str, Any]]]:
    """The blocking part of the node (embedding, Chroma, BM25), run on one worker thread."""
    retrieval = deps.retriever.retrieve(query, deps.top_k)
    docs = [
        {
            "id": doc.id,
            "content": doc.text,
            "similarity": round(doc.similarity, 6),
            "metadata": doc.metadata,
            "collection": doc.collection,
            "why": doc.explanation(),
        }
        for doc in retrieval.docs
    ]
    catalogue = getattr(deps.retriever, "services", None)
    service = incident.get("service")
    if service and isinstance(catalogue, ServiceCatalogue):
        store = getattr(deps.retriever, "store", None)
        docs = apply_service(
            docs,
            service,
            catalogue,
            collection=str(getattr(deps.retriever, "collection_name", "")),
            similarity=partial(dense_similarities, store, query) if store is not None else None,
        )
    past: list[dict[str, Any]] = []
    if deps.history is not None and deps.history_top_k > 0:
        past = deps.history.search(query, deps.history_top_k, incident_id)
    return retrieval, docs, past


async def rag(state: RcaState, deps: GraphDeps) -> dict[str, Any]:
    """Retrieve top-k docs; record exactly what the RCA will see and why each ranked.

    The query (``deps.build_query``) starts with code, event and message, then the terms the
    evidence parser found (exception, causal line, codes, statuses), then the stack trace and
    log lines: many incidents carry their evidence only there (measured effect in
    docs/architecture/retrieval-evaluation.md). Collected log records count as log lines.
    The incident's ``service`` then boosts the docs of that service and adds the ones the
    engine did not return (``app.rag.services``); each doc's ``why.service_match`` records
    how the service relates to it, for the diagnosis.
    """
    query = deps.build_query(
        with_collected_logs(state["incident"], state.get("collected_evidence", []))
    )
    flags = find_injections(state["incident"], state.get("collected_evidence", []))
    if not query.strip():
        # Nothing but instructions to the model ("cite PAY-408"): no symptom to search for.
        LOW_CONFIDENCE.inc()
        return {
            "query": query,
            "similar_error_docs": [],
            "similar_past_incidents": [],
            "low_confidence": True,
            "retrieval_low_confidence": True,
            "retrieval_notes": [NOTHING_TO_SEARCH],
            "injection_flags": flags,
        }
    retrieval, docs, past = await asyncio.to_thread(
        _retrieve, query, state["incident"], state.get("incident_id"), deps
    )
    if retrieval.low_confidence:
        LOW_CONFIDENCE.inc()
    return {
        "query": query,
        "similar_error_docs": docs,
        "similar_past_incidents": past,
        "low_confidence": retrieval.low_confidence,
        "retrieval_low_confidence": retrieval.low_confidence,
        "retrieval_notes": list(retrieval.notes),
        "injection_flags": flags,
    }
