"""The notification outbox in the shared database, claimed by workers without waiting.

Claims use ``FOR UPDATE SKIP LOCKED``, so workers dispatching at the same moment take
disjoint messages without waiting on each other.
"""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from app.intake.outbox import OutboxMessage, OutboxStatus
from app.storage.postgres.connection import Pool
from app.storage.postgres.schema import create_tables
from app.storage.rows import MESSAGE_COLUMNS, message_from_row
from app.storage.schema import NOTIFICATION_OUTBOX


class PostgresOutbox:
    """The PostgreSQL implementation of ``NotificationOutbox``."""

    def __init__(self, pool: Pool) -> None:
        """Query through ``pool``.

        Args:
            pool: The backend's pool.
        """
        self._pool = pool

    async def setup(self) -> None:
        """Create the table if needed."""
        await create_tables(self._pool, (NOTIFICATION_OUTBOX,))

    async def enqueue(
        self, key: str, incident_id: str, kind: str, payload: dict[str, Any], at: str
    ) -> bool:
        """Store a message due at once; False when ``key`` exists."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "INSERT INTO notification_outbox "
                "(key, incident_id, kind, payload, next_attempt_at, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                (key, incident_id, kind, Jsonb(payload), at, at),
            )
            return cursor.rowcount == 1

    async def claim(self, now: str, claim_until: str, limit: int) -> list[OutboxMessage]:
        """Claim due messages nobody holds; concurrent claimers skip each other's rows."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE notification_outbox SET claimed_until = %s, attempts = attempts + 1 "
                "WHERE id IN (SELECT id FROM notification_outbox WHERE status = 'pending' "
                "AND next_attempt_at <= %s AND (claimed_until IS NULL OR claimed_until <= %s) "
                "ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) "
                f"RETURNING {', '.join(MESSAGE_COLUMNS)}",
                (claim_until, now, now, limit),
            )
            rows = await cursor.fetchall()
        return sorted((message_from_row(r) for r in rows), key=lambda m: m.id)

    async def mark_sent(self, message_id: int, at: str) -> None:
        """Record a delivery."""
        await self._finish(message_id, OutboxStatus.SENT, at, None)

    async def retry_at(self, message_id: int, when: str, error: str) -> None:
        """Release the claim; due again at ``when``."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE notification_outbox SET next_attempt_at = %s, claimed_until = NULL, "
                "last_error = %s WHERE id = %s",
                (when, error, message_id),
            )

    async def give_up(self, message_id: int, at: str, error: str) -> None:
        """Mark the message failed."""
        await self._finish(message_id, OutboxStatus.FAILED, at, error)

    async def next_due(self) -> str | None:
        """The earliest time a pending message can be claimed."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT MIN(GREATEST(next_attempt_at, COALESCE(claimed_until, ''))) AS due "
                "FROM notification_outbox WHERE status = 'pending'"
            )
            row = await cursor.fetchone()
        return str(row["due"]) if row and row["due"] is not None else None

    async def counts(self) -> dict[str, int]:
        """Messages by status."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT status, COUNT(*) AS n FROM notification_outbox GROUP BY status"
            )
            rows = await cursor.fetchall()
        return {str(r["status"]): int(r["n"]) for r in rows}

    async def prune(self, before: str) -> int:
        """Delete finished messages older than ``before``."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "DELETE FROM notification_outbox WHERE status != 'pending' AND finished_at < %s",
                (before,),
            )
            return cursor.rowcount

    async def _finish(
        self, message_id: int, status: OutboxStatus, at: str, error: str | None
    ) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE notification_outbox SET status = %s, finished_at = %s, "
                "claimed_until = NULL, last_error = COALESCE(%s, last_error) WHERE id = %s",
                (status.value, at, error, message_id),
            )
