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

This module holds the record, the interface and the SQLite implementation; the PostgreSQL one
lives with the rest of the shared backend in ``app.storage.postgres``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

import aiosqlite


class OutboxStatus(StrEnum):
    """Where a message stands."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS notification_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    incident_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    claimed_until TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX IF NOT EXISTS notification_outbox_due
    ON notification_outbox (status, next_attempt_at);
"""

#: The columns a claim returns, in ``OutboxMessage`` order.
MESSAGE_COLUMNS = ("id", "key", "incident_id", "kind", "payload", "attempts")


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


def message_from_row(row: Any) -> OutboxMessage:
    """An ``OutboxMessage`` from a row in ``MESSAGE_COLUMNS`` order (tuple or mapping)."""
    values = [row[c] for c in MESSAGE_COLUMNS] if isinstance(row, dict) else list(row)
    payload = values[4]
    return OutboxMessage(
        id=int(values[0]),
        key=str(values[1]),
        incident_id=str(values[2]),
        kind=str(values[3]),
        payload=json.loads(payload) if isinstance(payload, str) else dict(payload),
        attempts=int(values[5]),
    )


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


class SqliteOutbox:
    """The outbox in the embedded SQLite file, over the backend's one connection."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection

    async def setup(self) -> None:
        """Create the table if needed."""
        await self._db.executescript(SQLITE_SCHEMA)
        await self._db.commit()

    async def enqueue(
        self, key: str, incident_id: str, kind: str, payload: dict[str, Any], at: str
    ) -> bool:
        """Store a message due at once; False when ``key`` exists."""
        cursor = await self._db.execute(
            "INSERT INTO notification_outbox "
            "(key, incident_id, kind, payload, next_attempt_at, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            (key, incident_id, kind, json.dumps(payload), at, at),
        )
        await self._db.commit()
        return cursor.rowcount == 1

    async def claim(self, now: str, claim_until: str, limit: int) -> list[OutboxMessage]:
        """One ``UPDATE … RETURNING``: atomic on the single connection."""
        async with self._db.execute(
            "UPDATE notification_outbox SET claimed_until = ?, attempts = attempts + 1 "
            "WHERE id IN (SELECT id FROM notification_outbox WHERE status = 'pending' "
            "AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?) "
            "ORDER BY id LIMIT ?) "
            f"RETURNING {', '.join(MESSAGE_COLUMNS)}",
            (claim_until, now, now, limit),
        ) as cursor:
            rows = await cursor.fetchall()
        await self._db.commit()
        return sorted((message_from_row(r) for r in rows), key=lambda m: m.id)

    async def mark_sent(self, message_id: int, at: str) -> None:
        """Record a delivery."""
        await self._finish(message_id, OutboxStatus.SENT, at, None)

    async def retry_at(self, message_id: int, when: str, error: str) -> None:
        """Release the claim; due again at ``when``."""
        await self._db.execute(
            "UPDATE notification_outbox SET next_attempt_at = ?, claimed_until = NULL, "
            "last_error = ? WHERE id = ?",
            (when, error, message_id),
        )
        await self._db.commit()

    async def give_up(self, message_id: int, at: str, error: str) -> None:
        """Mark the message failed."""
        await self._finish(message_id, OutboxStatus.FAILED, at, error)

    async def next_due(self) -> str | None:
        """The earliest time a pending message can be claimed."""
        async with self._db.execute(
            "SELECT MIN(MAX(next_attempt_at, COALESCE(claimed_until, ''))) "
            "FROM notification_outbox WHERE status = 'pending'"
        ) as cursor:
            row = await cursor.fetchone()
        return str(row[0]) if row and row[0] is not None else None

    async def counts(self) -> dict[str, int]:
        """Messages by status."""
        async with self._db.execute(
            "SELECT status, COUNT(*) FROM notification_outbox GROUP BY status"
        ) as cursor:
            rows = await cursor.fetchall()
        return {str(status): int(count) for status, count in rows}

    async def prune(self, before: str) -> int:
        """Delete finished messages older than ``before``."""
        cursor = await self._db.execute(
            "DELETE FROM notification_outbox WHERE status != 'pending' AND finished_at < ?",
            (before,),
        )
        await self._db.commit()
        return cursor.rowcount

    async def _finish(
        self, message_id: int, status: OutboxStatus, at: str, error: str | None
    ) -> None:
        await self._db.execute(
            "UPDATE notification_outbox SET status = ?, finished_at = ?, claimed_until = NULL, "
            "last_error = COALESCE(?, last_error) WHERE id = ?",
            (status.value, at, error, message_id),
        )
        await self._db.commit()
