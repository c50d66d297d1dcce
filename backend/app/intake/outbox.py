"""The notification outbox: messages to send are written to the database before any delivery.

A reviewer notification is first a row in ``notification_outbox``, committed in the same
database as the incident it is about; a dispatcher then claims due rows, posts them and records
the outcome. So a message survives a crash or restart (it is delivered when the service is back)
and, with several workers on one PostgreSQL database, each message is claimed by one worker at
a time. Delivery is *at least once*: a worker that dies after the receiver accepted a message
but before marking it sent leaves it to be sent again when its claim expires.

Each message has a ``key`` naming what it announces (e.g. ``review_ready:<id>:<updated_at>``);
enqueueing an existing key is a no-op, which is what makes a reminder go out once per review
however many workers notice it is overdue.

This module holds the record and the interface; the implementations live in
``app.storage.sqlite.outbox`` and ``app.storage.postgres.outbox``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class OutboxStatus(StrEnum):
    """Where a message stands."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


def timestamp(moment: datetime | None = None) -> str:
    """A UTC time as fixed-width ISO 8601, so the database can compare them as text.

    Args:
        moment: The time (now when omitted); naive times are taken as UTC.

    Returns:
        ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``.
    """
    moment = moment or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class OutboxMessage:
    """One claimed message.

    Attributes:
        id: The row id.
        key: What the message announces; unique.
        incident_id: The incident it is about.
        kind: Why it is sent (a ``NotificationKind`` value).
        payload: The JSON body to post (already rendered and redacted).
        attempts: Delivery attempts so far, including the one this claim is for.
    """

    id: int
    key: str
    incident_id: str
    kind: str
    payload: dict[str, Any]
    attempts: int


class NotificationOutbox(Protocol):
    """Durable storage of messages to send, shared by every worker of a deployment."""

    async def enqueue(
        self, key: str, incident_id: str, kind: str, payload: dict[str, Any], at: str
    ) -> bool:
        """Store a message due at once; False (and nothing changed) when ``key`` exists."""
        ...

    async def claim(self, now: str, claim_until: str, limit: int) -> list[OutboxMessage]:
        """Take up to ``limit`` due pending messages nobody holds, until ``claim_until``.

        Each claimed message counts one more attempt. Concurrent claimers never receive the
        same message while its claim runs.
        """
        ...

    async def mark_sent(self, message_id: int, at: str) -> None:
        """Record a delivery."""
        ...

    async def retry_at(self, message_id: int, when: str, error: str) -> None:
        """Release the claim and make the message due again at ``when``."""
        ...

    async def give_up(self, message_id: int, at: str, error: str) -> None:
        """Stop trying: the message is ``failed`` with its last error."""
        ...

    async def next_due(self) -> str | None:
        """When the earliest pending message is next due (or its claim runs out), or None."""
        ...

    async def counts(self) -> dict[str, int]:
        """Messages by status."""
        ...

    async def prune(self, before: str) -> int:
        """Delete sent and failed messages finished before ``before``; how many went."""
        ...
