"""Durable alert fingerprint → incident mapping, so a re-sent alert is not analysed twice.

Alertmanager re-sends every alert of a group on each group change and every
``repeat_interval``; the fingerprint (a hash of the alert's labels) identifies one alert across
those notifications. The table lives in the state backend's database: the SQLite file beside the
incident index here, or the shared PostgreSQL database (``app.storage.postgres``), where the
per-fingerprint lock also spans workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS alert_fingerprints (
    fingerprint TEXT PRIMARY KEY,
    incident_id TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 1,
    resolved_at TEXT
);
CREATE INDEX IF NOT EXISTS alert_fingerprints_incident ON alert_fingerprints (incident_id);
"""

COLUMNS = ("fingerprint", "incident_id", "first_seen", "last_seen", "count", "resolved_at")


@dataclass(frozen=True)
class FingerprintRecord:
    """One alert fingerprint and the incident it opened.

    Attributes:
        fingerprint: The alert's fingerprint.
        incident_id: The incident created for it most recently.
        first_seen: When that incident was created for it (ISO 8601).
        last_seen: When the alert last fired (ISO 8601).
        count: How many firing notifications mapped to that incident.
        resolved_at: When a resolved notification annotated the incident, if one did.
    """

    fingerprint: str
    incident_id: str
    first_seen: str
    last_seen: str
    count: int
    resolved_at: str | None = None


class FingerprintLocks:
    """One asyncio lock per fingerprint, so concurrent deliveries of one alert open one incident."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, fingerprint: str) -> AsyncIterator[None]:
        """Hold the fingerprint's lock.

        Args:
            fingerprint: An alert fingerprint.

        Yields:
            Nothing; the lock is held meanwhile.
        """
        lock = self._locks.setdefault(fingerprint, asyncio.Lock())
        self._users[fingerprint] = self._users.get(fingerprint, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[fingerprint] -= 1
            if not self._users[fingerprint]:
                del self._users[fingerprint], self._locks[fingerprint]


class FingerprintStore(Protocol):
    """The ``alert_fingerprints`` table of one state backend."""

    def hold(self, fingerprint: str) -> AbstractAsyncContextManager[None]:
        """Serialise work on one fingerprint across everyone sharing the table."""
        ...

    async def get(self, fingerprint: str) -> FingerprintRecord | None:
        """The record of ``fingerprint``, or None."""
        ...

    async def assign(self, fingerprint: str, incident_id: str, at: str) -> None:
        """Map ``fingerprint`` to a new incident, replacing any earlier (closed) one."""
        ...

    async def seen_again(self, fingerprint: str, at: str) -> None:
        """Count one more firing notification; a re-fired alert is no longer resolved."""
        ...

    async def mark_resolved(self, fingerprint: str, at: str) -> None:
        """Record that the alert was reported resolved."""
        ...


def record_from_row(row: Any) -> FingerprintRecord:
    """A ``FingerprintRecord`` from a row in ``COLUMNS`` order (tuple or mapping).

    Args:
        row: A database row.

    Returns:
        The record.
    """
    values = [row[c] for c in COLUMNS] if isinstance(row, dict) else list(row)
    return FingerprintRecord(
        fingerprint=values[0],
        incident_id=values[1],
        first_seen=values[2],
        last_seen=values[3],
        count=int(values[4]),
        resolved_at=values[5],
    )


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
        await self._db.executescript(SCHEMA)
        await self._db.commit()

    async def get(self, fingerprint: str) -> FingerprintRecord | None:
        """The record of ``fingerprint``, or None.

        Args:
            fingerprint: An alert fingerprint.

        Returns:
            The record, or None when the fingerprint was never seen.
        """
        async with self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM alert_fingerprints WHERE fingerprint = ?",
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
