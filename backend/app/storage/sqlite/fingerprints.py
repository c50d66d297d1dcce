"""Alert fingerprints in the SQLite file: one process, so an in-memory lock serialises them."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import aiosqlite

from app.intake.fingerprints import FingerprintLocks, FingerprintRecord
from app.storage.rows import FINGERPRINT_COLUMNS, record_from_row
from app.storage.schema import ALERT_FINGERPRINTS
from app.storage.sqlite.schema import create_tables


class SqliteFingerprintStore:
    """The ``alert_fingerprints`` table over one aiosqlite connection (one process)."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection
        self._locks = FingerprintLocks()

    def hold(self, fingerprint: str) -> AbstractAsyncContextManager[None]:
        """Serialise work on one fingerprint within this process (SQLite serves one).

        Args:
            fingerprint: An alert fingerprint.

        Returns:
            An async context manager holding the fingerprint's lock.
        """
        return self._locks.hold(fingerprint)

    async def setup(self) -> None:
        """Create the table if needed."""
        await create_tables(self._db, (ALERT_FINGERPRINTS,))

    async def get(self, fingerprint: str) -> FingerprintRecord | None:
        """The record of ``fingerprint``, or None.

        Args:
            fingerprint: An alert fingerprint.

        Returns:
            The record, or None when the fingerprint was never seen.
        """
        async with self._db.execute(
            f"SELECT {', '.join(FINGERPRINT_COLUMNS)} FROM alert_fingerprints "
            "WHERE fingerprint = ?",
            (fingerprint,),
        ) as cursor:
            row = await cursor.fetchone()
        return None if row is None else record_from_row(row)

    async def assign(self, fingerprint: str, incident_id: str, at: str) -> None:
        """Map ``fingerprint`` to a new incident, replacing any earlier (closed) one.

        Args:
            fingerprint: An alert fingerprint.
            incident_id: The incident just created for it.
            at: Now, ISO 8601.
        """
        await self._db.execute(
            "INSERT INTO alert_fingerprints "
            "(fingerprint, incident_id, first_seen, last_seen, count, resolved_at) "
            "VALUES (?, ?, ?, ?, 1, NULL) "
            "ON CONFLICT (fingerprint) DO UPDATE SET incident_id = excluded.incident_id, "
            "first_seen = excluded.first_seen, last_seen = excluded.last_seen, count = 1, "
            "resolved_at = NULL",
            (fingerprint, incident_id, at, at),
        )
        await self._db.commit()

    async def seen_again(self, fingerprint: str, at: str) -> None:
        """Count one more firing notification; a re-fired alert is no longer resolved.

        Args:
            fingerprint: An alert fingerprint that has a record.
            at: Now, ISO 8601.
        """
        await self._db.execute(
            "UPDATE alert_fingerprints SET count = count + 1, last_seen = ?, resolved_at = NULL "
            "WHERE fingerprint = ?",
            (at, fingerprint),
        )
        await self._db.commit()

    async def mark_resolved(self, fingerprint: str, at: str) -> None:
        """Record that the alert was reported resolved.

        Args:
            fingerprint: An alert fingerprint that has a record.
            at: When the resolution was received, ISO 8601.
        """
        await self._db.execute(
            "UPDATE alert_fingerprints SET resolved_at = ? WHERE fingerprint = ?",
            (at, fingerprint),
        )
        await self._db.commit()
