"""The incident index and audit trail in the SQLite file, beside the graph checkpoints.

The index answers list and status questions without replaying graphs. Status changes that
must happen exactly once (claiming a pending review for a decision) are compare-and-set
updates, so two reviewers racing for one incident cannot both win.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from app.incidents.repository import AuditEvent
from app.storage.rows import INCIDENT_COLUMNS, event_from_row, event_values, row_dict
from app.storage.schema import AUDIT_EVENTS, INCIDENTS
from app.storage.sqlite.schema import create_tables

COLUMNS = ", ".join(INCIDENT_COLUMNS)


class SqliteIncidentRepository:
    """The SQLite implementation of ``IncidentRepository``, over one aiosqlite connection."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._db = connection

    async def setup(self) -> None:
        """Create the tables if needed."""
        await create_tables(self._db, (INCIDENTS, AUDIT_EVENTS))

    async def insert(self, row: dict[str, Any]) -> None:
        """Add a new incident row."""
        values = [row.get(c) for c in INCIDENT_COLUMNS]
        marks = ", ".join("?" * len(INCIDENT_COLUMNS))
        await self._db.execute(f"INSERT INTO incidents ({COLUMNS}) VALUES ({marks})", values)
        await self._db.commit()

    async def get(self, incident_id: str) -> dict[str, Any] | None:
        """One row, or None."""
        async with self._db.execute(
            f"SELECT {COLUMNS} FROM incidents WHERE id = ?", (incident_id,)
        ) as cursor:
            found = await cursor.fetchone()
        return row_dict(found, INCIDENT_COLUMNS) if found else None

    async def update(self, incident_id: str, **fields: Any) -> None:
        """Set fields of a row unconditionally."""
        unknown = set(fields) - set(INCIDENT_COLUMNS)
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
            f"SELECT {COLUMNS} FROM incidents {where} "
            "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            [*params, limit, offset],
        ) as cursor:
            rows = await cursor.fetchall()
        total = int(total_row[0]) if total_row else 0
        return [row_dict(r, INCIDENT_COLUMNS) for r in rows], total

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``, oldest first."""
        marks = ", ".join("?" * len(statuses))
        async with self._db.execute(
            f"SELECT {COLUMNS} FROM incidents WHERE status IN ({marks}) ORDER BY created_at",
            statuses,
        ) as cursor:
            rows = await cursor.fetchall()
        return [row_dict(r, INCIDENT_COLUMNS) for r in rows]

    async def add_event(self, incident_id: str, event: AuditEvent) -> None:
        """Append to the audit trail."""
        await self._db.execute(
            "INSERT INTO audit_events (incident_id, type, at, actor, action, comment, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            event_values(incident_id, event, json.dumps),
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
        return [event_from_row(r) for r in rows]

    @asynccontextmanager
    async def lease(self, incident_id: str) -> AsyncIterator[bool]:
        """Always granted: an embedded database has one worker, and it owns every run."""
        yield True

    @asynccontextmanager
    async def recovery_lock(self) -> AsyncIterator[None]:
        """Nothing to wait for: an embedded database has one worker."""
        yield
