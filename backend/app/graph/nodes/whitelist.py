"""The ``whitelist`` node: keep only evidence that was actually supplied to the RCA.

It never trusts the generator: any cited id that is neither a doc of this run nor a piece of
this incident is dropped and recorded; a claim left with no evidence is marked unsupported.
"""

from __future__ import annotations

from typing import Any

from app.graph.state import RcaState
from app.rca.evidence import incident_evidence


def allowed_evidence_ids(state: RcaState) -> set[str]:
    """Doc ids of this run plus the incident's own evidence ids."""
    doc_ids = {d["id"] for d in state.get("similar_error_docs", [])}
    return doc_ids | {e.id for e in incident_evidence(state["incident"])}


def filter_rca(rca: dict[str, Any], allowed: set[str]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``rca`` citing only allowed ids, and the dropped ids in order."""
    dropped: dict[str, None] = {}
    hypotheses = []
    for hypothesis in rca.get("hypotheses", []):
        claims = []
        for claim in hypothesis.get("claims", []):
            kept = [c for c in claim.get("evidence", []) if c.get("id") in allowed]
            for citation in claim.get("evidence", []):
                if citation.get("id") not in allowed:
                    dropped.setdefault(str(citation.get("id")), None)
            claims.append({**claim, "evidence": kept, "supported": bool(kept)})
        hypotheses.append({**hypothesis, "claims": claims})
    return {**rca, "hypotheses": hypotheses}, list(dropped)


def whitelist(state: RcaState) -> dict[str, Any]:
    """Drop unsupplied citations and record them."""
    filtered, dropped = filter_rca(state["rca"], allowed_evidence_ids(state))
    return {"rca": filtered, "dropped_evidence_ids": dropped}
