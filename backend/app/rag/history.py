"""Incident history: every approved RCA becomes knowledge the next incident can find.

Most incidents recur. When a review is approved (as drafted or edited), the final RCA is stored
as a doc in the ``incident_history`` collection — id from the incident id, so an incident is
stored once however often recovery repeats the write, metadata with the incident id, error
code, decision time and reviewer — before the decision response returns.
Rejected RCAs are never learned. The rag node searches this collection beside the error docs
and the API shows the matches as ``similar_past_incidents``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from typing import Any

from app.rag.ingest import KnowledgeChunk
from app.rag.store import VectorStore

ID_PREFIX = "incident-"
logger = logging.getLogger(__name__)


def history_text(incident: dict[str, Any], rca: dict[str, Any]) -> str:
    """The text a past incident is embedded and shown as."""
    hypotheses = rca.get("hypotheses") or []
    head = " ".join(
        str(incident.get(k)).strip() for k in ("error_code", "event") if incident.get(k)
    )
    lines = [f"Incident {head}: {str(incident.get('message', '')).strip()}".replace("  ", " ")]
    if hypotheses:
        lines.append(f"Root cause: {hypotheses[0].get('statement', '')}")
    lines.append(f"Summary: {rca.get('summary', '')}")
    if rca.get("remediation"):
        lines.append("Remediation: " + "; ".join(rca["remediation"]))
    return "\n".join(lines)


def learned_code(incident: dict[str, Any], rca: dict[str, Any]) -> str:
    """The family the reviewer approved: the leading hypothesis's code, else the incident's."""
    hypotheses = rca.get("hypotheses") or []
    code = hypotheses[0].get("error_code") if hypotheses else None
    return str(code or incident.get("error_code") or "")


class IncidentHistory:
    """The collection of approved RCAs."""

    def __init__(self, store: VectorStore, floor: float) -> None:
        self.store = store
        self.floor = floor
        self._lock = threading.Lock()
        self._known = {c.id for c in store.all_chunks()}

    def count(self) -> int:
        """How many past incidents are stored."""
        return self.store.count()

    def learn(
        self,
        incident_id: str,
        incident: dict[str, Any],
        rca: dict[str, Any],
        decided_at: str,
        reviewer: str | None,
    ) -> str:
        """Store an approved RCA; idempotent (one doc per incident). Returns the doc id."""
        text = history_text(incident, rca)
        doc_id = ID_PREFIX + hashlib.sha256(incident_id.encode("utf-8")).hexdigest()[:16]
        with self._lock:
            if doc_id in self._known:
                return doc_id
            metadata: dict[str, str | int] = {
                "incident_id": incident_id,
                "error_code": learned_code(incident, rca),
                "decided_at": decided_at,
                "reviewer": reviewer or "",
                "summary": str(rca.get("summary", ""))[:1000],
            }
            # Upsert: another worker sharing the store may have written it meanwhile.
            self.store.upsert([KnowledgeChunk(id=doc_id, text=text, metadata=metadata)])
            self._known.add(doc_id)
        return doc_id

    def search(
        self, query: str, limit: int, exclude_incident: str | None = None
    ) -> list[dict[str, Any]]:
        """Past incidents at least ``floor``-similar to ``query``, best first.

        History is context, not a dependency: when its store fails the run goes on without it.
        """
        try:
            hits = self.store.query(query, limit + 1)
        except Exception:
            logger.warning("incident history search failed; continuing without it", exc_info=True)
            return []
        found = []
        for hit in hits:
            if hit.similarity < self.floor or hit.metadata.get("incident_id") == exclude_incident:
                continue
            found.append(
                {
                    "incident_id": hit.metadata.get("incident_id"),
                    "error_code": hit.metadata.get("error_code") or None,
                    "summary": hit.metadata.get("summary", ""),
                    "similarity": round(hit.similarity, 6),
                    "decided_at": hit.metadata.get("decided_at"),
                    "id": hit.id,
                }
            )
        return found[:limit]
