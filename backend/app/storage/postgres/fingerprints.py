"""Alert fingerprints in the shared database, each held across every worker while in use."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.intake.fingerprints import FingerprintLocks, FingerprintRecord
from app.storage.postgres.connection import Pool
from app.storage.postgres.locks import LockSession, advisory_key
from app.storage.postgres.schema import create_tables
from app.storage.rows import FINGERPRINT_COLUMNS, record_from_row
from app.storage.schema import ALERT_FINGERPRINTS


class PostgresFingerprintStore:
    """The ``alert_fingerprints`` table in the shared database.

    ``hold`` serialises one fingerprint across every worker: an asyncio lock first (so tasks of
    this worker queue in memory, since advisory locks are re-entrant within one session), then
    the fingerprint's advisory lock on the worker's lock session. The session is not one of the
    pool's connections, so holding many fingerprints never starves the pool the incident runs
    inside the hold need.
    """

    def __init__(self, pool: Pool, locks: LockSession) -> None:
        """Query through ``pool``; lock through ``locks``.

        Args:
            pool: The backend's pool.
            locks: This worker's advisory-lock session.
        """
        self._pool = pool
        self._locks = locks
        self._local = FingerprintLocks()

    async def setup(self) -> None:
        """Create the table if needed."""
        await create_tables(self._pool, (ALERT_FINGERPRINTS,))

    @asynccontextmanager
    async def hold(self, fingerprint: str) -> AsyncIterator[None]:
        """Hold the fingerprint against this worker's other tasks and every other worker.

        Args:
            fingerprint: An alert fingerprint.

        Yields:
            Nothing; the fingerprint is held meanwhile.
        """
        async with (
            self._local.hold(fingerprint),
            self._locks.hold(advisory_key(f"rca:fingerprint:{fingerprint}")),
        ):
            yield

    async def get(self, fingerprint: str) -> FingerprintRecord | None:
        """The record of ``fingerprint``, or None."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {', '.join(FINGERPRINT_COLUMNS)} FROM alert_fingerprints "
                "WHERE fingerprint = %s",
                (fingerprint,),
            )
            row = await cursor.fetchone()
        return None if row is None else record_from_row(row)

    async def assign(self, fingerprint: str, incident_id: str, at: str) -> None:
        """Map ``fingerprint`` to a new incident, replacing any earlier (closed) one."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "INSERT INTO alert_fingerprints "
                "(fingerprint, incident_id, first_seen, last_seen, count, resolved_at) "
                "VALUES (%s, %s, %s, %s, 1, NULL) "
                "ON CONFLICT (fingerprint) DO UPDATE SET incident_id = excluded.incident_id, "
                "first_seen = excluded.first_seen, last_seen = excluded.last_seen, count = 1, "
                "resolved_at = NULL",
                (fingerprint, incident_id, at, at),
            )

    async def seen_again(self, fingerprint: str, at: str) -> None:
        """Count one more firing notification; a re-fired alert is no longer resolved."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE alert_fingerprints SET count = count + 1, last_seen = %s, "
                "resolved_at = NULL WHERE fingerprint = %s",
                (at, fingerprint),
            )

    async def mark_resolved(self, fingerprint: str, at: str) -> None:
        """Record that the alert was reported resolved."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "UPDATE alert_fingerprints SET resolved_at = %s WHERE fingerprint = %s",
                (at, fingerprint),
            )
