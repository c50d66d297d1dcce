"""The incident service: create incidents, run them to review, apply decisions exactly once.

Requests flow api → service → graph. The index row (with its ``created`` event and any
``Idempotency-Key``) is written in one transaction before the graph runs, and status changes
are compare-and-set, so a crash at any point leaves a state that ``recover()`` can finish:
runs cut off mid-analysis or mid-decision run on from their last checkpoint, a decision that
never reached the graph leaves the review pending again. The index status, the audit events
(each with an idempotent key, see ``app.incidents.records``) and the history entry are all
derived from the graph state, the index last, so recovery writes whatever a crash left out,
exactly once. A create that fails (rather than crashes) is rolled back: nothing of it stays.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Durability
from pydantic import ValidationError

from app.core.errors import Conflict, NotFound, ValidationFailed
from app.graph.state import RcaState
from app.incidents.edits import check_edit
from app.incidents.groups import assign_group
from app.incidents.postmortem import Postmortem, build_postmortem
from app.incidents.records import (
    DECIDED,
    created_event,
    decision_event,
    draft_event,
    draft_summary,
)
from app.incidents.redaction import Redactor
from app.incidents.repository import AuditEvent, IdempotencyRecord, IncidentRepository
from app.incidents.text import received, storable
from app.rag.history import IncidentHistory
from app.rca.citations import allowed_evidence_ids, filter_rca
from app.rca.grounding import CitationChecker
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

#: The checkpoint channel holding a resume value (langgraph's ``RESUME``): a review whose
#: interrupt has one is being decided, not waiting.
RESUME_CHANNEL = "__resume__"

#: How long an ``Idempotency-Key`` is remembered unless the service is told otherwise.
DEFAULT_IDEMPOTENCY_TTL = timedelta(hours=24)


def utcnow() -> str:
    """Current UTC time as ISO 8601."""
    return datetime.now(UTC).isoformat()


def thread_config(incident_id: str) -> RunnableConfig:
    """The graph config addressing one incident's thread."""
    return {"configurable": {"thread_id": incident_id}}


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
        idempotency_ttl: timedelta = DEFAULT_IDEMPOTENCY_TTL,
        checker: CitationChecker | None = None,
    ) -> None:
        self.graph = graph
        self.repository = repository
        self.observers = list(observers)
        self.redactor = redactor or Redactor()
        self.history = history
        self.idempotency_ttl = idempotency_ttl
        # Checks a reviewer's edited claims like the draft's (app.incidents.edits).
        self.checker = checker
        # Runs this process drives right now: periodic recovery must leave them alone.
        self._active: set[str] = set()

    @asynccontextmanager
    async def _driving(self, incident_id: str) -> AsyncIterator[None]:
        """Mark a run as driven by this process for the block; 409 when it already is."""
        if incident_id in self._active:
            raise Conflict(f"incident '{incident_id}' is being decided elsewhere")
        self._active.add(incident_id)
        try:
            yield
        finally:
            self._active.discard(incident_id)

    async def _notify(self, incident_id: str, values: dict[str, Any]) -> None:
        """Tell observers where the incident stands; their failures are logged, not raised."""
        if not self.observers:
            return
        incident = await self.get(incident_id, values)
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
        created, _ = await self.create_once(body, None)
        return created

    async def create_once(
        self, body: IncidentCreate, idempotency_key: str | None
    ) -> tuple[IncidentPublic, bool]:
        """Create, or with a known ``idempotency_key`` return what that create made.

        Returns:
            The incident, and whether this call created it (False: a replay of the key).

        Raises:
            ValidationFailed: The key was used with another body.
        """
        # Unstorable characters stripped, then masked, before anything is stored or sent.
        incident = received(body.model_dump(mode="json", exclude_none=True), self.redactor)
        digest = hashlib.sha256(json.dumps(incident, sort_keys=True).encode()).hexdigest()
        now = utcnow()
        record = None
        if idempotency_key is not None:
            cutoff = (datetime.now(UTC) - self.idempotency_ttl).isoformat()
            held = await self.repository.idempotency_record(idempotency_key, cutoff)
            if held is not None:
                return await self._replay(held, digest), False
            record = IdempotencyRecord(idempotency_key, digest, "", now)
        incident_id = str(uuid.uuid4())
        if record is not None:
            record = IdempotencyRecord(record.key, digest, incident_id, now)
        initial: RcaState = {
            "incident_id": incident_id,
            "incident": incident,
            "created_at": now,
            "drafts": [],
        }
        # Held while the run is in flight: no other worker starting up "recovers" it.
        async with self.repository.lease(incident_id), self._driving(incident_id):
            held = await self.repository.insert(
                {
                    "id": incident_id,
                    "status": IncidentStatus.ANALYZING.value,
                    "error_code": incident.get("error_code"),
                    "service": incident.get("service"),
                    "message": incident.get("message"),
                    "event": incident.get("event"),
                    "created_at": now,
                    "updated_at": now,
                },
                [created_event(incident, now)],
                record,
            )
            if held is not None:
                # A concurrent create with the same key won the insert.
                return await self._replay(held, digest), False
            try:
                # Checkpointed once, at the review interrupt: a crash before it leaves no
                # checkpoint, and recovery starts again from the recorded input.
                values = await self._run(incident_id, initial, durability="exit")
            except BaseException:
                # All or nothing for the client: a failed create leaves no review behind.
                await self._discard(incident_id)
                raise
        await assign_group(self.repository, incident_id, values, now)
        return await self.get(incident_id, values), True

    async def _replay(self, held: IdempotencyRecord, digest: str) -> IncidentPublic:
        if held.request_hash != digest:
            raise ValidationFailed("Idempotency-Key was already used with a different request body")
        return await self.get(held.incident_id)

    async def _discard(self, incident_id: str) -> None:
        try:
            await self.repository.delete(incident_id)
        except Exception:
            # The store itself is failing: recovery finishes the run on the next start.
            logger.exception("could not roll back failed create of incident %s", incident_id)

    async def _run(
        self,
        incident_id: str,
        graph_input: RcaState | Command[Any] | None,
        durability: Durability = "async",
    ) -> dict[str, Any]:
        """Run (or resume) the graph, bring the index up to date; returns the state's values.

        ``durability`` is langgraph's: ``"async"`` checkpoints every step, ``"exit"`` only
        where the run stops (an interrupt, the end or an error).
        """
        await self.graph.ainvoke(graph_input, thread_config(incident_id), durability=durability)
        values = await self._sync_index(incident_id)
        await self._notify(incident_id, values)
        return values

    async def _awaiting_review(self, snapshot: Any) -> bool:
        """Whether the run waits on an unanswered interrupt (a held resume value runs on)."""
        if not snapshot.interrupts:
            return False
        saver = self.graph.checkpointer
        if not isinstance(saver, BaseCheckpointSaver):
            return True
        saved = await saver.aget_tuple(snapshot.config)
        writes = (saved.pending_writes if saved else None) or []
        return not any(channel == RESUME_CHANNEL for _, channel, _ in writes)

    async def _sync_index(self, incident_id: str) -> dict[str, Any]:
        """Write what the graph state implies: events, history, then the index status.

        Every write is idempotent and the index comes last, so after a crash the row is
        still in flight and recovery repeats this until it completes.

        Returns:
            The state's values, as read for this.
        """
        snapshot = await self.graph.aget_state(thread_config(incident_id))
        values = snapshot.values
        now = utcnow()
        if await self._awaiting_review(snapshot):
            if values.get("decision", {}).get("action") == "reanalyze":
                await self._record_decision(incident_id, values)
            await self.repository.add_event(incident_id, draft_event(values, now))
            await self.repository.update(
                incident_id,
                status=IncidentStatus.AWAITING_REVIEW.value,
                updated_at=now,
                **draft_summary(values.get("rca")),
            )
        elif not snapshot.next and values.get("status") in DECIDED:
            await self._record_decision(incident_id, values)
            await self._learn(incident_id)
            await self.repository.update(
                incident_id,
                status=values["status"],
                decided_by=values.get("decision", {}).get("reviewer"),
                decision_action=values.get("decision", {}).get("action"),
                updated_at=now,
            )
        return values

    async def _record_decision(self, incident_id: str, values: dict[str, Any]) -> None:
        event = decision_event(values)
        if event is not None:
            await self.repository.add_event(incident_id, event)

    async def get(self, incident_id: str, values: dict[str, Any] | None = None) -> IncidentPublic:
        """One incident with its full analysis (from the latest checkpoint, no replay).

        Args:
            incident_id: The incident.
            values: The state's values when the caller has just read them.
        """
        row = await self.repository.get(incident_id)
        if row is None:
            raise NotFound(f"no incident with id '{incident_id}'")
        if values is None:
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
            injection_flags=values.get("injection_flags", []),
            unsupported_citations=values.get("unsupported_citations", []),
            low_confidence=values.get("low_confidence", False),
            diagnosis=values.get("diagnosis"),
            decision=values.get("decision"),
            drafts=values.get("drafts", []),
            assignee=row.get("assignee"),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )

    async def page(self, status: str | None, limit: int, offset: int) -> IncidentList:
        """A page of incidents from the index, newest first."""
        rows, total = await self.repository.page(status, limit, offset)
        items = [IncidentSummary(**{k: v for k, v in r.items() if k != "message"}) for r in rows]
        return IncidentList(items=items, total=total, limit=limit)

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
        if "rca" in resume and self.checker is not None and snapshot.values:
            resume["rca"] = await asyncio.to_thread(
                check_edit,
                resume["rca"],
                snapshot.values.get("rca"),
                snapshot.values,
                self.checker,
                confirm_unsupported=decision.confirm_unsupported,
            )
        async with self.repository.lease(incident_id) as owned, self._driving(incident_id):
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
            if not await self._awaiting_review(snapshot):
                await self._release(incident_id)
                raise Conflict(f"incident '{incident_id}' has no pending review")
            try:
                await self.graph.ainvoke(Command(resume=resume), thread_config(incident_id))
            except Exception:
                await self._release(incident_id)
                raise
            # The decision event, the history entry and the index status, from the state.
            values = await self._sync_index(incident_id)
            await self._notify(incident_id, values)
        return await self.get(incident_id, values)

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
        decision = DecisionCreate.model_validate(storable(decision.model_dump(mode="json")))
        resume: dict[str, Any] = {
            # The decision's idempotency key in the audit trail.
            "id": uuid.uuid4().hex,
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

    async def _initial_input(self, row: dict[str, Any]) -> RcaState | None:
        events = await self.repository.events(row["id"])
        created = next((e for e in events if e.type == "created"), None)
        if created is None:
            return None
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
                if listed["id"] in self._active:
                    continue
                async with self.repository.lease(listed["id"]) as owned:
                    # Re-read under the lease: another worker may have finished it meanwhile.
                    row = await self.repository.get(listed["id"]) if owned else None
                    # No await between this check and _recover_one's claim of the run.
                    if (
                        row is not None
                        and row["status"] in in_flight
                        and row["id"] not in self._active
                    ):
                        touched += await self._recover_one(row)
        return touched

    async def recover_periodically(self, interval: float) -> None:
        """Recover every ``interval`` seconds until cancelled; failures are logged."""
        while True:
            await asyncio.sleep(interval)
            try:
                recovered = await self.recover()
            except Exception:
                logger.exception("periodic recovery failed")
                continue
            if recovered:
                logger.info("took over %d interrupted incident run(s)", recovered)

    async def _recover_one(self, row: dict[str, Any]) -> int:
        """Finish one interrupted run; 1 when done, 0 when it failed again (logged).

        Waiting on an unanswered interrupt: the review is pending (again). Anything else
        pending, a decision's resume value included, runs on to the end. A finished run gets
        whatever of its events, history entry and index status a crash left out.
        """
        incident_id = row["id"]
        try:
            async with self._driving(incident_id):
                snapshot = await self.graph.aget_state(thread_config(incident_id))
                if not snapshot.values:
                    # Crashed before the first checkpoint: start again from the recorded input.
                    initial = await self._initial_input(row)
                    if initial is None:
                        await self.repository.delete(incident_id)
                    else:
                        await self._run(incident_id, initial)
                elif await self._awaiting_review(snapshot):
                    await self._sync_index(incident_id)
                else:
                    # A live snapshot may show no ``next`` while a finished task's writes
                    # wait for the step's checkpoint; running on with no input commits
                    # them, and is a no-op on a run that already reached its end.
                    await self._run(incident_id, None)
        except Exception:
            logger.exception("could not recover incident %s", incident_id)
            return 0
        return 1
