"""Which evidence ids an RCA may cite, and an RCA reduced to those ids.

Used by the ``whitelist`` node on every draft and by the incident service on a reviewer's
edit, so one rule decides what counts as supplied evidence wherever an RCA is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.rca.evidence import incident_evidence


def allowed_evidence_ids(
    docs: Iterable[Mapping[str, Any]],
    incident: Mapping[str, Any],
    collected: Iterable[Mapping[str, Any]] = (),
) -> set[str]:
    """Ids of the docs supplied to the RCA, the incident's own and the collected evidence ids.

    Args:
        docs: The retrieved docs the RCA saw (each with an ``id``).
        incident: The incident the RCA is about.
        collected: The items the ``collect`` node gathered for it (each with an ``id``).

    Returns:
        Every id a citation may name.
    """
    doc_ids = {str(d["id"]) for d in docs} | {str(c["id"]) for c in collected}
    return doc_ids | {e.id for e in incident_evidence(dict(incident))}


def filter_rca(rca: dict[str, Any], allowed: set[str]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``rca`` citing only allowed ids, and the dropped ids in order.

    Args:
        rca: The RCA document.
        allowed: The ids it may cite.

    Returns:
        The filtered RCA (claims left without evidence marked unsupported) and the dropped ids.
    """
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
