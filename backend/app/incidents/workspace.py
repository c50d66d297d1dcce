"""What a review team does beside deciding one incident: list, claim, decide a group at once.

A ``Workspace`` wraps the ``IncidentService``: the list reads the index through the
repository's search (``app.incidents.listing``); a claim is an index field with an
``assigned`` audit event; a bulk decision is one ``IncidentService.decide`` per incident, so
each gets its own audit event and the exactly-once rules of a single decision, and answers
with one result per id (a refusal for one incident does not stop the others).
"""

from __future__ import annotations

from typing import Any

from app.core.errors import AppError, Conflict, NotFound
from app.incidents.listing import IncidentQuery, encode_cursor
from app.incidents.records import DECIDED
from app.incidents.repository import AuditEvent
from app.incidents.service import IncidentService, utcnow
from app.schemas import (
    LIST_MESSAGE_CHARS,
    BulkDecisionCreate,
    BulkDecisionPublic,
    BulkDecisionResult,
    DecisionCreate,
    ErrorBody,
    IncidentList,
    IncidentPublic,
    IncidentStatus,
    IncidentSummary,
)

_SUMMARY_FIELDS = tuple(IncidentSummary.model_fields)


def summary_of(row: dict[str, Any]) -> IncidentSummary:
    """A list row from an index row (the message cut to its first characters)."""
    values = {name: row.get(name) for name in _SUMMARY_FIELDS if name in row}
    if values.get("message"):
        values["message"] = str(values["message"])[:LIST_MESSAGE_CHARS]
    return IncidentSummary(**values)


class Workspace:
    """List, claim and bulk-decide incidents through one ``IncidentService``."""

    def __init__(self, service: IncidentService) -> None:
        """Work on the incidents ``service`` drives."""
        self.service = service
        self.repository = service.repository

    async def list(self, query: IncidentQuery) -> IncidentList:
        """One page of the list, its counts per status and the cursor of the next page."""
        page = await self.repository.search(query)
        more = page.has_more and bool(page.rows)
        counts = {status: page.counts.get(status.value, 0) for status in IncidentStatus}
        return IncidentList(
            items=[summary_of(row) for row in page.rows],
            total=page.total,
            counts=counts,
            limit=query.limit,
            next_cursor=encode_cursor(query.sort, page.rows[-1]) if more else None,
        )

    async def assign(self, incident_id: str, assignee: str | None, actor: str) -> IncidentPublic:
        """Claim the incident for ``assignee`` (None releases it); 404 unknown, 409 decided."""
        row = await self.repository.get(incident_id)
        if row is None:
            raise NotFound(f"no incident with id '{incident_id}'")
        if row["status"] in DECIDED:
            raise Conflict(f"incident '{incident_id}' was already decided ({row['status']})")
        previous = row.get("assignee")
        if previous != assignee:
            # updated_at stays: it marks when the review began waiting (reminders use it).
            await self.repository.update(incident_id, assignee=assignee)
            await self.repository.add_event(
                incident_id,
                AuditEvent(
                    "assigned",
                    utcnow(),
                    actor,
                    None,
                    None,
                    {"assignee": assignee, "previous": previous},
                ),
            )
        return await self.service.get(incident_id)

    async def decide_many(self, body: BulkDecisionCreate, actor: str) -> BulkDecisionPublic:
        """Decide each incident on its own; one result per id, in order."""
        results = []
        for incident_id in body.ids:
            decision = DecisionCreate(action=body.action, comment=body.comment)
            try:
                decided = await self.service.decide(incident_id, decision, actor)
            except AppError as exc:
                row = await self.repository.get(incident_id)
                results.append(
                    BulkDecisionResult(
                        id=incident_id,
                        ok=False,
                        status=IncidentStatus(row["status"]) if row else None,
                        error=ErrorBody(code=exc.code, message=exc.message),
                    )
                )
                continue
            results.append(BulkDecisionResult(id=incident_id, ok=True, status=decided.status))
        return BulkDecisionPublic(results=results)
