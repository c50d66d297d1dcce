"""The incident service: create incidents, run them to review, apply decisions exactly once.

Requests flow api → service → graph. The index row is written before the graph runs, and
status changes are compare-and-set, so a crash at any point leaves a state that ``recover()``
can finish: runs cut off mid-analysis resume from their last checkpoint, and a decision cut
off before it was applied leaves the review pending again.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import ValidationError

from app.core.errors import Conflict, NotFound, ValidationFailed
from app.graph.state import RcaState
from app.incidents.postmortem import Postmortem, build_postmortem
from app.incidents.redaction import Redactor
from app.incidents.repository import AuditEvent, IncidentRepository
from app.rag.history import IncidentHistory
from app.rca.citations import allowed_evidence_ids, filter_rca
from app.rca.schema import Rca
from app.schemas import (
    DecisionAction,
    DecisionCreate,
    IncidentCreate,
    IncidentList,
    IncidentPublic,
    IncidentStatus,
    IncidentSummary,
)

logger = logging.getLogger(__name__)

Graph = CompiledStateGraph[RcaState, Any, RcaState, RcaState]


def utcnow() -> str:
    """Current UTC time as ISO 8601."""
    return datetime.now(UTC).isoformat()


def thread_config(incident_id: str) -> RunnableConfig:
    """The graph config addressing one incident's thread."""
    return {"configurable": {"thread_id": incident_id}}


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


class IncidentObserver(Protocol):
    """Told about review milestones (notifications, metrics); must never raise into the run."""

    async def review_ready(self, incident: IncidentPublic) -> None:
        """A draft now awaits review."""
        ...

    async def decided(self, incident: IncidentPublic) -> None:
        """A reviewer approved or rejected the incident."""
        ...


class IncidentService:
    """Drives incidents through the graph and keeps the index and audit trail in step."""

    def __init__(
        self,
        graph: Graph,
        repository: IncidentRepository,
        observers: Sequence[IncidentObserver] = (),
        redactor: Redactor | None = None,
        history: IncidentHistory | None = None,
    ) -> None:
        self.graph = graph
        self.repository = repository
        self.observers = list(observers)
        self.redactor = redactor or Redactor()
        self.history = history

    async def _notify(self, incident_id: str) -> None:
        """Tell observers where the incident stands; their failures are logged, not raised."""
        if not self.observers:
            return
        incident = await self.get(incident_id)
        for observer in self.observers:
            try:
                if incident.status is IncidentStatus.AWAITING_REVIEW:
                    await observer.review_ready(incident)
                elif incident.status in (IncidentStatus.APPROVED, IncidentStatus.REJECTED):
                    await observer.decided(incident)
            except Exception:
                logger.exception("observer %s failed for incident %s", observer, incident_id)

    async def create(self, body: IncidentCreate) -> IncidentPublic:
        """Record the incident, run it to the review point and return it."""
        # Masked before anything is stored, logged, sent to an LLM or notified.
        incident = self.redactor.data(body.model_dump(mode="json", exclude_none=True))
        incident_id = str(uuid.uuid4())
        now = utcnow()
        initial: RcaState = {
            "incident_id": incident_id,
            "incident": incident,
            "created_at": now,
            "drafts": [],
        }
        # Held while the run is in flight: no other worker starting up "recovers" it.
        async with self.repository.lease(incident_id):
            await self.repository.insert(
                {
                    "id": incident_id,
                    "status": IncidentStatus.ANALYZING.value,
                    "error_code": incident.get("error_code"),
                    "service": incident.get("service"),
                    "created_at": now,
                    "updated_at": now,
                }
            )
            await self.repository.add_event(
                incident_id, AuditEvent("created", now, None, None, None, {"incident": incident})
            )
            await self._run(incident_id, initial)
        return await self.get(incident_id)

    async def _run(self, incident_id: str, graph_input: RcaState | Command[Any] | None) -> None:
        """Run (or resume) the graph and bring the index up to date with where it stopped."""
        await self.graph.ainvoke(graph_input, thread_config(incident_id))
        await self._sync_index(incident_id)
        await self._notify(incident_id)

    async def _sync_index(self, incident_id: str) -> None:
        snapshot = await self.graph.aget_state(thread_config(incident_id))
        values = snapshot.values
        now = utcnow()
        if any(task.interrupts for task in snapshot.tasks):
            await self.repository.update(
                incident_id,
                status=IncidentStatus.AWAITING_REVIEW.value,
                updated_at=now,
                **draft_summary(values.get("rca")),
            )
            await self.repository.add_event(
                incident_id,
                AuditEvent(
                    "draft",
                    now,
                    values.get("rca", {}).get("provenance", {}).get("generator"),
                    None,
                    None,
                    {
                        "rca": values.get("rca"),
                        "dropped_evidence_ids": values.get("dropped_evidence_ids", []),
                        **collected_record(values),
                    },
                ),
            )
        elif not snapshot.next and values.get("status") in ("approved", "rejected"):
            decision = values.get("decision", {})
            await self.repository.update(
                incident_id,
                status=values["status"],
                decided_by=decision.get("reviewer"),
                updated_at=now,
            )

    async def get(self, incident_id: str) -> IncidentPublic:
        """One incident with its full analysis (from the latest checkpoint, no replay)."""
        row = await self.repository.get(incident_id)
        if row is None:
            raise NotFound(f"no incident with id '{incident_id}'")
        values = (await self.graph.aget_state(thread_config(incident_id))).values
        return IncidentPublic(
            id=incident_id,
            status=IncidentStatus(row["status"]),
            incident=values.get("incident", {}),
            rca=values.get("rca"),
            final_rca=values.get("final_rca"),
            similar_error_docs=values.get("similar_error_docs", []),
            similar_past_incidents=values.get("similar_past_incidents", []),
            collected_evidence=values.get("collected_evidence", []),
            sources_unavailable=values.get("sources_unavailable", []),
            dropped_evidence_ids=values.get("dropped_evidence_ids", []),
            unsupported_citations=values.get("unsupported_citations", []),
            low_confidence=values.get("low_confidence", False),
            decision=values.get("decision"),
            drafts=values.get("drafts", []),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )

    async def page(self, status: str | None, limit: int, offset: int) -> IncidentList:
        """A page of incidents from the index, newest first."""
        rows, total = await self.repository.page(status, limit, offset)
        return IncidentList(
            items=[IncidentSummary(**r) for r in rows], total=total, limit=limit, offset=offset
        )

    async def audit(self, incident_id: str) -> list[AuditEvent]:
        """The incident's audit trail."""
        if await self.repository.get(incident_id) is None:
            raise NotFound(f"no incident with id '{incident_id}'")
        return await self.repository.events(incident_id)

    async def postmortem(self, incident_id: str) -> Postmortem:
        """The postmortem of a decided incident; 404 unknown, 409 not decided yet."""
        record = await self.get(incident_id)
        return build_postmortem(record, await self.repository.events(incident_id))

    async def decide(
        self, incident_id: str, decision: DecisionCreate, actor: str
    ) -> IncidentPublic:
        """Apply a reviewer's decision exactly once; 404 unknown, 409 not pending."""
        row = await self.repository.get(incident_id)
        if row is None:
            raise NotFound(f"no incident with id '{incident_id}'")
        snapshot = await self.graph.aget_state(thread_config(incident_id))
        resume = self._resume_value(decision, actor, snapshot.values)
        async with self.repository.lease(incident_id) as owned:
            if not owned:
                # Another worker is analysing, deciding or recovering it right now.
                raise Conflict(f"incident '{incident_id}' is being decided elsewhere")
            claimed = await self.repository.transition(
                incident_id,
                IncidentStatus.AWAITING_REVIEW.value,
                IncidentStatus.DECIDING.value,
                utcnow(),
            )
            if not claimed:
                raise self._not_pending(await self.repository.get(incident_id) or row)
            # Resuming a thread with no pending interrupt would start a new run: check first.
            if not any(task.interrupts for task in snapshot.tasks):
                await self._release(incident_id)
                raise Conflict(f"incident '{incident_id}' has no pending review")
            try:
                await self.graph.ainvoke(Command(resume=resume), thread_config(incident_id))
            except Exception:
                await self._release(incident_id)
                raise
            now = utcnow()
            await self.repository.add_event(
                incident_id,
                AuditEvent(
                    "decision",
                    now,
                    actor,
                    decision.action.value,
                    resume["comment"],
                    {
                        "original_rca": snapshot.values.get("rca"),
                        "edited_rca": resume.get("rca"),
                        "diff": rca_diff(snapshot.values.get("rca"), resume.get("rca")),
                    },
                ),
            )
            await self._sync_index(incident_id)
            await self._learn(incident_id)
            await self._notify(incident_id)
        return await self.get(incident_id)

    async def _learn(self, incident_id: str) -> None:
        """An approved RCA joins the incident history before the decision returns."""
        if self.history is None:
            return
        values = (await self.graph.aget_state(thread_config(incident_id))).values
        if values.get("status") != IncidentStatus.APPROVED.value or not values.get("final_rca"):
            return
        try:
            await asyncio.to_thread(
                self.history.learn,
                incident_id,
                values["incident"],
                values["final_rca"],
                values.get("decided_at", ""),
                values.get("decision", {}).get("reviewer"),
            )
        except Exception:
            # The decision stands; the history is rebuilt from approvals when it starts empty.
            logger.exception("could not add incident %s to the history", incident_id)

    async def rebuild_history(self) -> int:
        """Learn every approved incident again (an in-memory history starts empty)."""
        rows = await self.repository.with_status(IncidentStatus.APPROVED.value)
        for row in rows:
            await self._learn(row["id"])
        return len(rows)

    def _resume_value(
        self, decision: DecisionCreate, actor: str, values: dict[str, Any]
    ) -> dict[str, Any]:
        """The plain value the approval node is resumed with; validated before any claim."""
        resume: dict[str, Any] = {
            "action": decision.action.value,
            "reviewer": actor,
            "comment": self.redactor.text(decision.comment) if decision.comment else None,
            "decided_at": utcnow(),
        }
        if decision.action is DecisionAction.EDIT:
            try:
                edited = self.redactor.data(
                    Rca.model_validate(decision.rca).model_dump(mode="json")
                )
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "rca"
                raise ValidationFailed(
                    f"edited rca is invalid at '{where}': {first['msg']}"
                ) from exc
            if values:
                allowed = allowed_evidence_ids(
                    values.get("similar_error_docs", []),
                    values["incident"],
                    values.get("collected_evidence", []),
                )
                edited, _ = filter_rca(edited, allowed)
            edited["provenance"] = {**edited.get("provenance", {}), "edited_by": actor}
            resume["rca"] = edited
        if decision.action is DecisionAction.REANALYZE and decision.added_evidence:
            resume["added_evidence"] = self.redactor.data(
                decision.added_evidence.model_dump(exclude_none=True)
            )
        return resume

    def _not_pending(self, row: dict[str, Any]) -> Conflict:
        status = row["status"]
        if status in (IncidentStatus.APPROVED.value, IncidentStatus.REJECTED.value):
            who = row.get("decided_by") or "another reviewer"
            return Conflict(f"incident '{row['id']}' was already decided ({status}) by {who}")
        return Conflict(f"incident '{row['id']}' is not awaiting review (status: {status})")

    async def _release(self, incident_id: str) -> None:
        await self.repository.transition(
            incident_id,
            IncidentStatus.DECIDING.value,
            IncidentStatus.AWAITING_REVIEW.value,
            utcnow(),
        )

    async def _initial_input(self, row: dict[str, Any]) -> RcaState:
        created = next(e for e in await self.repository.events(row["id"]) if e.type == "created")
        return {
            "incident_id": row["id"],
            "incident": created.data["incident"],
            "created_at": row["created_at"],
            "drafts": [],
        }

    async def recover(self) -> int:
        """Finish what a crash interrupted; returns how many incidents were touched.

        Every worker runs this at start. With several workers on one database, recoveries
        take turns (``recovery_lock``) and a run is recovered only when its lease can be
        taken, i.e. no live worker is analysing or deciding it.
        """
        touched = 0
        in_flight = (IncidentStatus.ANALYZING.value, IncidentStatus.DECIDING.value)
        async with self.repository.recovery_lock():
            for listed in await self.repository.with_status(*in_flight):
                async with self.repository.lease(listed["id"]) as owned:
                    # Re-read under the lease: another worker may have finished it meanwhile.
                    row = await self.repository.get(listed["id"]) if owned else None
                    if row is not None and row["status"] in in_flight:
                        touched += await self._recover_one(row)
        return touched

    async def _recover_one(self, row: dict[str, Any]) -> int:
        """Finish one interrupted run; 1 when done, 0 when it failed again (logged)."""
        incident_id = row["id"]
        snapshot = await self.graph.aget_state(thread_config(incident_id))
        try:
            if any(task.interrupts for task in snapshot.tasks):
                # A decision that never reached the graph: the review is pending again.
                await self.repository.update(
                    incident_id,
                    status=IncidentStatus.AWAITING_REVIEW.value,
                    updated_at=utcnow(),
                )
            elif not snapshot.values:
                # Crashed before the first checkpoint: start again from the recorded input.
                await self._run(incident_id, await self._initial_input(row))
            elif snapshot.next:
                await self._run(incident_id, None)
            else:
                await self._sync_index(incident_id)
        except Exception:
            logger.exception("could not recover incident %s", incident_id)
            return 0
        return 1
