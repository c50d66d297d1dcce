"""The incident index and audit trail in the SQLite file, beside the graph checkpoints.

The index answers list and status questions without replaying graphs. Status changes that
must happen exactly once (claiming a pending review for a decision) are compare-and-set
updates, so two reviewers racing for one incident cannot both win.

The connection is shared with the checkpointer, whose lock every write here takes too: a
multi-statement write (a create with its first event and idempotency key) is then never
committed half-way by a checkpoint commit running in between.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from app.incidents.listing import IncidentPage, IncidentQuery
from app.incidents.repository import AuditEvent, IdempotencyRecord
from app.storage.rows import (
    EVENT_COLUMNS,
    IDEMPOTENCY_COLUMNS,
    INCIDENT_COLUMNS,
    event_from_row,
    event_values,
    idempotency_from_row,
    row_dict,
)
from app.storage.schema import AUDIT_EVENTS, IDEMPOTENCY_KEYS, INCIDENTS
from app.storage.sqlite.schema import create_tables
from app.storage.sqlite.search import create_search, latest_group, search

COLUMNS = ", ".join(INCIDENT_COLUMNS)
INSERT_EVENT = (
    "INSERT INTO audit_events (incident_id, type, at, actor, action, comment, data, key) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)


class SqliteIncidentRepository:
    """The SQLite implementation of ``IncidentRepository``, over one aiosqlite connection."""

    def __init__(self, connection: aiosqlite.Connection, lock: asyncio.Lock | None = None) -> None:
        """Use ``connection``; ``lock`` is the one its other writers (the checkpointer) hold."""
        self._db = connection
        self._lock = lock or asyncio.Lock()

    async def setup(self) -> None:
        """Create the tables if needed."""
        await create_tables(self._db, (INCIDENTS, AUDIT_EVENTS, IDEMPOTENCY_KEYS))
        await create_search(self._db)

    async def insert(
        self,
        row: dict[str, Any],
        events: Sequence[AuditEvent] = (),
        idempotency: IdempotencyRecord | None = None,
    ) -> IdempotencyRecord | None:
        """Add a new incident row with its first events and idempotency key, all or nothing."""
        values = [row.get(c) for c in INCIDENT_COLUMNS]
        marks = ", ".join("?" * len(INCIDENT_COLUMNS))
        async with self._lock:
            try:
                if idempotency is not None:
                    cursor = await self._db.execute(
                        f"INSERT INTO idempotency_keys ({', '.join(IDEMPOTENCY_COLUMNS)}) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        [getattr(idempotency, c) for c in IDEMPOTENCY_COLUMNS],
                    )
                    if cursor.rowcount != 1:
                        await self._db.rollback()
                        return await self._idempotency(idempotency.key)
                await self._db.execute(
                    f"INSERT INTO incidents ({COLUMNS}) VALUES ({marks})", values
                )
                for event in events:
                    await self._db.execute(INSERT_EVENT, event_values(row["id"], event, json.dumps))
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise
        return None

    async def idempotency_record(self, key: str, not_before: str) -> IdempotencyRecord | None:
        """The record holding ``key``; records created before ``not_before`` are purged first."""
        async with self._lock:
            await self._db.execute(
                "DELETE FROM idempotency_keys WHERE created_at < ?", (not_before,)
            )
            await self._db.commit()
        return await self._idempotency(key)

    async def _idempotency(self, key: str) -> IdempotencyRecord | None:
        async with self._db.execute(
            f"SELECT {', '.join(IDEMPOTENCY_COLUMNS)} FROM idempotency_keys WHERE key = ?",
            (key,),
        ) as cursor:
            found = await cursor.fetchone()
        return idempotency_from_row(found) if found else None

    async def delete(self, incident_id: str) -> None:
        """Remove an incident row with its audit trail and idempotency keys (a failed create)."""
        async with self._lock:
            for table in ("audit_events", "idempotency_keys"):
                await self._db.execute(f"DELETE FROM {table} WHERE incident_id = ?", (incident_id,))
            await self._db.execute("DELETE FROM incidents WHERE id = ?", (incident_id,))
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
        async with self._lock:
            await self._db.execute(
                f"UPDATE incidents SET {assignments} WHERE id = ?",
                [*fields.values(), incident_id],
            )
            await self._db.commit()

    async def transition(self, incident_id: str, expected: str, new: str, updated_at: str) -> bool:
        """Compare-and-set the status; True when this caller won."""
        async with self._lock:
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

    async def search(self, query: IncidentQuery) -> IncidentPage:
        """One page of the incident list, with its counts."""
        return await search(self._db, query, INCIDENT_COLUMNS)

    async def latest_group(self, family: str, service: str | None, since: str) -> str | None:
        """The group key of the newest incident of ``family`` and ``service`` since ``since``."""
        return await latest_group(self._db, family, service, since)

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``, oldest first."""
        marks = ", ".join("?" * len(statuses))
        async with self._db.execute(
            f"SELECT {COLUMNS} FROM incidents WHERE status IN ({marks}) ORDER BY created_at",
            statuses,
        ) as cursor:
            rows = await cursor.fetchall()
        return [row_dict(r, INCIDENT_COLUMNS) for r in rows]

    async def add_event(self, incident_id: str, event: AuditEvent) -> bool:
        """Append to the audit trail; False when an event with the same ``key`` is there."""
        async with self._lock:
            cursor = await self._db.execute(
                INSERT_EVENT, event_values(incident_id, event, json.dumps)
            )
            await self._db.commit()
        return cursor.rowcount == 1

    async def events(self, incident_id: str) -> list[AuditEvent]:
        """The audit trail in order."""
        async with self._db.execute(
            f"SELECT {', '.join(EVENT_COLUMNS)} FROM audit_events "
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
