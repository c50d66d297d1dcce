"""The incident index and audit trail, in the same SQLite file as the graph checkpoints.

The index answers list and status questions without replaying graphs. Status changes that
must happen exactly once (claiming a pending review for a decision) are compare-and-set
updates, so two reviewers racing for one incident cannot both win.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import aiosqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS incidents (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    error_code TEXT,
    service TEXT,
    confidence TEXT,
    summary TEXT,
    decided_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS incidents_status_created ON incidents (status, created_at);
CREATE INDEX IF NOT EXISTS incidents_created ON incidents (created_at);
CREATE TABLE IF NOT EXISTS audit_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    incident_id TEXT NOT NULL,
    type TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT,
    action TEXT,
    comment TEXT,
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS audit_events_incident ON audit_events (incident_id, seq);
"""

COLUMNS = (
    "id",
    "status",
    "error_code",
    "service",
    "confidence",
    "summary",
    "decided_by",
    "created_at",
    "updated_at",
)


@dataclass(frozen=True)
class AuditEvent:
    """One entry of an incident's audit trail."""

    type: str
    at: str
    actor: str | None
    action: str | None
    comment: str | None
    data: dict[str, Any]


class IncidentRepository(Protocol):
    """Durable incident index and audit trail."""

    async def insert(self, row: dict[str, Any]) -> None:
        """Add a new incident row."""
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

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``."""
        ...

    async def add_event(self, incident_id: str, event: AuditEvent) -> None:
        """Append to the audit trail."""
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


class SqliteIncidentRepository:
    """The SQLite implementation, over one aiosqlite connection."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection

    async def setup(self) -> None:
        """Create the tables if needed."""
        await self._db.executescript(SCHEMA)
        await self._db.commit()

    async def insert(self, row: dict[str, Any]) -> None:
        """Add a new incident row."""
        values = [row.get(c) for c in COLUMNS]
        marks = ", ".join("?" * len(COLUMNS))
        await self._db.execute(
            f"INSERT INTO incidents ({', '.join(COLUMNS)}) VALUES ({marks})", values
        )
        await self._db.commit()

    async def get(self, incident_id: str) -> dict[str, Any] | None:
        """One row, or None."""
        async with self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM incidents WHERE id = ?", (incident_id,)
        ) as cursor:
            found = await cursor.fetchone()
        return dict(zip(COLUMNS, found, strict=True)) if found else None

    async def update(self, incident_id: str, **fields: Any) -> None:
        """Set fields of a row unconditionally."""
        unknown = set(fields) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown incident columns: {sorted(unknown)}")
        assignments = ", ".join(f"{name} = ?" for name in fields)
        await self._db.execute(
            f"UPDATE incidents SET {assignments} WHERE id = ?", [*fields.values(), incident_id]
        )
        await self._db.commit()

    async def transition(self, incident_id: str, expected: str, new: str, updated_at: str) -> bool:
        """Compare-and-set the status; True when this caller won."""
        cursor = await self._db.execute(
            "UPDATE incidents SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
            (new, updated_at, incident_id, expected),
        )
        await self._db.commit()
        return cursor.rowcount == 1

    async def page(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of rows (newest first) and the total matching."""
        where, params = ("WHERE status = ?", [status]) if status else ("", [])
        async with self._db.execute(f"SELECT COUNT(*) FROM incidents {where}", params) as cursor:
            total_row = await cursor.fetchone()
        async with self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM incidents {where} "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ) as cursor:
            rows = await cursor.fetchall()
        total = int(total_row[0]) if total_row else 0
        return [dict(zip(COLUMNS, r, strict=True)) for r in rows], total

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``, oldest first."""
        marks = ", ".join("?" * len(statuses))
        async with self._db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM incidents WHERE status IN ({marks}) "
            "ORDER BY created_at",
            statuses,
        ) as cursor:
            rows = await cursor.fetchall()
        return [dict(zip(COLUMNS, r, strict=True)) for r in rows]

    async def add_event(self, incident_id: str, event: AuditEvent) -> None:
        """Append to the audit trail."""
        await self._db.execute(
            "INSERT INTO audit_events (incident_id, type, at, actor, action, comment, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                incident_id,
                event.type,
                event.at,
                event.actor,
                event.action,
                event.comment,
                json.dumps(event.data),
            ),
        )
        await self._db.commit()

    async def events(self, incident_id: str) -> list[AuditEvent]:
        """The audit trail in order."""
        async with self._db.execute(
            "SELECT type, at, actor, action, comment, data FROM audit_events "
            "WHERE incident_id = ? ORDER BY seq",
            (incident_id,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            AuditEvent(
                type=r[0], at=r[1], actor=r[2], action=r[3], comment=r[4], data=json.loads(r[5])
            )
            for r in rows
        ]

    @asynccontextmanager
    async def lease(self, incident_id: str) -> AsyncIterator[bool]:
        """Always granted: an embedded database has one worker, and it owns every run."""
        yield True

    @asynccontextmanager
    async def recovery_lock(self) -> AsyncIterator[None]:
        """Nothing to wait for: an embedded database has one worker."""
        yield
