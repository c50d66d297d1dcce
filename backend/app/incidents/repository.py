"""The incident index and audit trail: the interface every state backend implements.

The index answers list and status questions without replaying graphs. Status changes that
must happen exactly once (claiming a pending review for a decision) are compare-and-set
updates, so two reviewers racing for one incident cannot both win. The implementations live
in ``app.storage.sqlite.incidents`` and ``app.storage.postgres.incidents``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from app.incidents.listing import IncidentPage, IncidentQuery


@dataclass(frozen=True)
class AuditEvent:
    """One entry of an incident's audit trail."""

    type: str
    at: str
    actor: str | None
    action: str | None
    comment: str | None
    data: dict[str, Any]
    #: Set on events that may be written again (by recovery): one event per key and incident.
    key: str | None = None


@dataclass(frozen=True)
class IdempotencyRecord:
    """A create request's ``Idempotency-Key``, the digest of its body and the incident it made."""

    key: str
    request_hash: str
    incident_id: str
    created_at: str


class IncidentRepository(Protocol):
    """Durable incident index and audit trail."""

    async def insert(
        self,
        row: dict[str, Any],
        events: Sequence[AuditEvent] = (),
        idempotency: IdempotencyRecord | None = None,
    ) -> IdempotencyRecord | None:
        """Add a new incident row with its first events and idempotency key, all or nothing.

        Returns None when written; when ``idempotency`` names a key another create holds,
        nothing is written and that create's record is returned.
        """
        ...

    async def idempotency_record(self, key: str, not_before: str) -> IdempotencyRecord | None:
        """The record holding ``key``; records created before ``not_before`` are purged first."""
        ...

    async def delete(self, incident_id: str) -> None:
        """Remove an incident row with its audit trail and idempotency keys (a failed create)."""
        ...

    async def get(self, incident_id: str) -> dict[str, Any] | None:
        """One row, or None."""
        ...

    async def update(self, incident_id: str, **fields: Any) -> None:
        """Set fields of a row unconditionally."""
        ...

    async def transition(self, incident_id: str, expected: str, new: str, updated_at: str) -> bool:
        """Compare-and-set the status; True when this caller won."""
        ...

    async def page(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of rows (newest first) and the total matching."""
        ...

    async def search(self, query: IncidentQuery) -> IncidentPage:
        """One page of the incident list, with its counts (see ``app.incidents.listing``)."""
        ...

    async def latest_group(self, family: str, service: str | None, since: str) -> str | None:
        """The group key of the newest incident of ``family`` and ``service`` since ``since``."""
        ...

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``."""
        ...

    async def add_event(self, incident_id: str, event: AuditEvent) -> bool:
        """Append to the audit trail; False when an event with the same ``key`` is there."""
        ...

    async def events(self, incident_id: str) -> list[AuditEvent]:
        """The audit trail in order."""
        ...

    def lease(self, incident_id: str) -> AbstractAsyncContextManager[bool]:
        """Own an incident's run for a block: True when no other live worker owns it."""
        ...

    def recovery_lock(self) -> AbstractAsyncContextManager[None]:
        """Let one worker at a time recover interrupted runs."""
        ...
