"""The notification outbox in the SQLite file, over the backend's one connection."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from app.intake.outbox import OutboxMessage, OutboxStatus
from app.storage.rows import MESSAGE_COLUMNS, message_from_row
from app.storage.schema import NOTIFICATION_OUTBOX
from app.storage.sqlite.schema import create_tables


class SqliteOutbox:
    """The SQLite implementation of ``NotificationOutbox``."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection

    async def setup(self) -> None:
        """Create the table if needed."""
        await create_tables(self._db, (NOTIFICATION_OUTBOX,))

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
