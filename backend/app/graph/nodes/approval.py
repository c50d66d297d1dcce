"""The ``approval`` node: pause until a human reviewer decides.

Everything before ``interrupt()`` re-runs on resume, so this node only reads state before it.
The decision is validated by the incident service *before* the run is resumed, so an invalid
decision never consumes the pending review.
"""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from app.graph.state import RcaState

ALLOWED_ACTIONS = ["approve", "reject", "edit", "reanalyze"]


def review_payload(state: RcaState) -> dict[str, Any]:
    """What the reviewer is shown: exactly what the RCA saw and what was dropped."""
    return {
        "incident_id": state.get("incident_id"),
        "incident": state["incident"],
        "rca": state["rca"],
        "similar_error_docs": state.get("similar_error_docs", []),
        "collected_evidence": state.get("collected_evidence", []),
        "sources_unavailable": state.get("sources_unavailable", []),
        "dropped_evidence_ids": state.get("dropped_evidence_ids", []),
        "unsupported_citations": state.get("unsupported_citations", []),
        "allowed_actions": ALLOWED_ACTIONS,
    }


def enrich_incident(incident: dict[str, Any], decision: dict[str, Any]) -> dict[str, Any]:
    """The incident with the evidence a reviewer added when asking for re-analysis."""
    added = decision.get("added_evidence") or {}
    enriched = dict(incident)
    if added.get("logs"):
        enriched["logs"] = list(incident.get("logs") or []) + list(added["logs"])
    if added.get("stack_trace"):
        enriched["stack_trace"] = added["stack_trace"]
    if added.get("note"):
        notes = list(incident.get("reviewer_notes") or [])
        enriched["reviewer_notes"] = notes + [added["note"]]
    return enriched


def approval(state: RcaState) -> dict[str, Any]:
    """Interrupt with the review payload; record the decision it is resumed with."""
    decision: dict[str, Any] = interrupt(review_payload(state))
    if decision.get("action") == "reanalyze":
        return {
            "incident": enrich_incident(state["incident"], decision),
            "drafts": [*state.get("drafts", []), state["rca"]],
            "decision": decision,
            "status": "reanalyzing",
        }
    return {"decision": decision}


def route_after_approval(state: RcaState) -> str:
    """Back to ``collect`` for re-analysis (fresh evidence, then retrieval); else ``finalize``."""
    return "collect" if state.get("decision", {}).get("action") == "reanalyze" else "finalize"
