"""Durable alert fingerprint → incident mapping, so a re-sent alert is not analysed twice.

Alertmanager re-sends every alert of a group on each group change and every
``repeat_interval``; the fingerprint (a hash of the alert's labels) identifies one alert across
those notifications. This module holds the record and the interface; the table lives in the
state backend's database, the SQLite file (``app.storage.sqlite.fingerprints``) or the shared
PostgreSQL database (``app.storage.postgres.fingerprints``), where the per-fingerprint lock also
spans workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol


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
