"""The audit events and index fields an incident's graph state implies, each with its key.

Everything here is a pure function of the graph state, so the service writes the same events
after a run and again when recovery finishes a run a crash cut off: the ``key`` of each event
(``created``, ``draft:<n>``, ``decision:<id>``) makes the second write a no-op.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from app.incidents.repository import AuditEvent

#: Decided outcomes: the graph finished and the index shows the status for good.
DECIDED = ("approved", "rejected")


def rca_diff(original: dict[str, Any] | None, edited: dict[str, Any] | None) -> str | None:
    """A unified diff of the reviewer's edit (pretty-printed JSON), or None without an edit."""
    if not original or not edited:
        return None

    def lines(rca: dict[str, Any]) -> list[str]:
        return json.dumps(rca, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(
        difflib.unified_diff(lines(original), lines(edited), "original", "edited", lineterm="")
    )


def draft_summary(rca: dict[str, Any] | None) -> dict[str, Any]:
    """Index fields taken from a draft."""
    rca = rca or {}
    return {"confidence": rca.get("confidence"), "summary": (rca.get("summary") or "")[:300]}


def collected_record(values: dict[str, Any]) -> dict[str, Any]:
    """What was collected for a draft, for its audit event: items without chart points.

    Empty when no source is configured, so such drafts are recorded exactly as before.
    """
    if "collected_evidence" not in values and "sources_unavailable" not in values:
        return {}
    return {
        "collected_evidence": [
            {k: v for k, v in item.items() if k != "points"}
            for item in values.get("collected_evidence", [])
        ],
        "sources_unavailable": values.get("sources_unavailable", []),
        "collected_at": values.get("collected_at"),
    }


def created_event(incident: dict[str, Any], at: str) -> AuditEvent:
    """The first event of every incident: what was submitted (after redaction)."""
    return AuditEvent("created", at, None, None, None, {"incident": incident}, key="created")


def draft_event(values: dict[str, Any], at: str) -> AuditEvent:
    """The draft now awaiting review; one per analysis round (re-analysis adds rounds)."""
    rca = values.get("rca") or {}
    return AuditEvent(
        "draft",
        at,
        rca.get("provenance", {}).get("generator"),
        None,
        None,
        {
            "rca": values.get("rca"),
            "dropped_evidence_ids": values.get("dropped_evidence_ids", []),
            **collected_record(values),
        },
        key=f"draft:{len(values.get('drafts', []))}",
    )


def decision_key(decision: dict[str, Any]) -> str:
    """The decision's idempotency key: its id (older states: the time it was made)."""
    return f"decision:{decision.get('id') or decision.get('decided_at')}"


def decision_event(values: dict[str, Any]) -> AuditEvent | None:
    """The event of the last decision the graph holds, with the reviewer's edit diff.

    The draft it decided on is the current one, except after a re-analysis, which moved it to
    the end of ``drafts``. None when the graph holds no decision.
    """
    decision = values.get("decision")
    if not decision:
        return None
    action = decision.get("action")
    drafts = values.get("drafts") or []
    original = drafts[-1] if action == "reanalyze" and drafts else values.get("rca")
    return AuditEvent(
        "decision",
        decision.get("decided_at") or "",
        decision.get("reviewer"),
        action,
        decision.get("comment"),
        {
            "original_rca": original,
            "edited_rca": decision.get("rca"),
            "diff": rca_diff(original, decision.get("rca")),
        },
        key=decision_key(decision),
    )
