"""The incident index and audit trail in the shared database, with leases on in-flight runs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from app.incidents.listing import IncidentPage, IncidentQuery
from app.incidents.repository import AuditEvent, IdempotencyRecord
from app.storage.postgres.connection import Pool
from app.storage.postgres.locks import RECOVERY_KEY, LockSession, advisory_key, advisory_lock
from app.storage.postgres.schema import create_tables
from app.storage.postgres.search import create_search, latest_group, search
from app.storage.rows import (
    EVENT_COLUMNS,
    IDEMPOTENCY_COLUMNS,
    INCIDENT_COLUMNS,
    event_from_row,
    event_values,
    idempotency_from_row,
)
from app.storage.schema import AUDIT_EVENTS, IDEMPOTENCY_KEYS, INCIDENTS

INSERT_EVENT = (
    "INSERT INTO audit_events (incident_id, type, at, actor, action, comment, data, key) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)
SELECT_IDEMPOTENCY = f"SELECT {', '.join(IDEMPOTENCY_COLUMNS)} FROM idempotency_keys WHERE key = %s"


class PostgresIncidentRepository:
    """The PostgreSQL implementation of ``IncidentRepository``, over a connection pool.

    Same semantics as ``SqliteIncidentRepository``; in addition it grants leases on in-flight
    incidents and a recovery lock, which matter once several workers share the database.
    """

    def __init__(self, pool: Pool, locks: LockSession) -> None:
        """Use ``pool`` for queries and ``locks`` for leases.

        Args:
            pool: An open pool whose connections are autocommit with ``dict_row`` rows.
            locks: This worker's advisory-lock session.
        """
        self._pool = pool
        self._locks = locks

    async def setup(self) -> None:
        """Create the tables if needed."""
        await create_tables(self._pool, (INCIDENTS, AUDIT_EVENTS, IDEMPOTENCY_KEYS))
        await create_search(self._pool)

    async def insert(
        self,
        row: dict[str, Any],
        events: Sequence[AuditEvent] = (),
        idempotency: IdempotencyRecord | None = None,
    ) -> IdempotencyRecord | None:
        """Add a new incident row with its first events and idempotency key, all or nothing."""
        query = sql.SQL("INSERT INTO incidents ({}) VALUES ({})").format(
            sql.SQL(", ").join(map(sql.Identifier, INCIDENT_COLUMNS)),
            sql.SQL(", ").join(sql.Placeholder() * len(INCIDENT_COLUMNS)),
        )
        async with self._pool.connection() as conn:
            async with conn.transaction():
                if idempotency is not None:
                    cursor = await conn.execute(
                        f"INSERT INTO idempotency_keys ({', '.join(IDEMPOTENCY_COLUMNS)}) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        [getattr(idempotency, c) for c in IDEMPOTENCY_COLUMNS],
                    )
                    taken = cursor.rowcount != 1
                else:
                    taken = False
                if not taken:
                    await conn.execute(query, [row.get(c) for c in INCIDENT_COLUMNS])
                    for event in events:
                        await conn.execute(INSERT_EVENT, event_values(row["id"], event, Jsonb))
            if taken and idempotency is not None:
                cursor = await conn.execute(SELECT_IDEMPOTENCY, (idempotency.key,))
                found = await cursor.fetchone()
                return idempotency_from_row(found) if found else None
        return None

    async def idempotency_record(self, key: str, not_before: str) -> IdempotencyRecord | None:
        """The record holding ``key``; records created before ``not_before`` are purged first."""
        async with self._pool.connection() as conn:
            await conn.execute("DELETE FROM idempotency_keys WHERE created_at < %s", (not_before,))
            cursor = await conn.execute(SELECT_IDEMPOTENCY, (key,))
            found = await cursor.fetchone()
        return idempotency_from_row(found) if found else None

    async def delete(self, incident_id: str) -> None:
        """Remove an incident row with its audit trail and idempotency keys (a failed create)."""
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("DELETE FROM audit_events WHERE incident_id = %s", (incident_id,))
            await conn.execute(
                "DELETE FROM idempotency_keys WHERE incident_id = %s", (incident_id,)
            )
            await conn.execute("DELETE FROM incidents WHERE id = %s", (incident_id,))

    async def get(self, incident_id: str) -> dict[str, Any] | None:
        """One row, or None."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_select("WHERE id = %s"), (incident_id,))
            found = await cursor.fetchone()
        return dict(found) if found else None

    async def update(self, incident_id: str, **fields: Any) -> None:
        """Set fields of a row unconditionally."""
        unknown = set(fields) - set(INCIDENT_COLUMNS)
        if unknown:
            raise ValueError(f"unknown incident columns: {sorted(unknown)}")
        assignments = sql.SQL(", ").join(
            sql.SQL("{} = %s").format(sql.Identifier(name)) for name in fields
        )
        query = sql.SQL("UPDATE incidents SET {} WHERE id = %s").format(assignments)
        async with self._pool.connection() as conn:
            await conn.execute(query, [*fields.values(), incident_id])

    async def transition(self, incident_id: str, expected: str, new: str, updated_at: str) -> bool:
        """Compare-and-set the status; True when this caller won.

        A racing ``UPDATE`` waits for the row lock, then re-checks ``status`` against the
        committed row, so of any number of concurrent callers exactly one changes it.
        """
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "UPDATE incidents SET status = %s, updated_at = %s WHERE id = %s AND status = %s",
                (new, updated_at, incident_id, expected),
            )
            return cursor.rowcount == 1

    async def page(
        self, status: str | None, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of rows (newest first) and the total matching."""
        where, params = ("WHERE status = %s", [status]) if status else ("", [])
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                sql.SQL("SELECT COUNT(*) AS total FROM incidents {}").format(sql.SQL(where)),
                params,
            )
            total_row = await cursor.fetchone()
            cursor = await conn.execute(
                _select(f"{where} ORDER BY created_at DESC, id DESC LIMIT %s OFFSET %s"),
                [*params, limit, offset],
            )
            rows = await cursor.fetchall()
        total = int(total_row["total"]) if total_row else 0
        return [dict(r) for r in rows], total

    async def search(self, query: IncidentQuery) -> IncidentPage:
        """One page of the incident list, with its counts."""
        return await search(self._pool, query, INCIDENT_COLUMNS)

    async def latest_group(self, family: str, service: str | None, since: str) -> str | None:
        """The group key of the newest incident of ``family`` and ``service`` since ``since``."""
        return await latest_group(self._pool, family, service, since)

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``, oldest first."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                _select("WHERE status = ANY(%s) ORDER BY created_at"), (list(statuses),)
            )
            rows = await cursor.fetchall()
        return [dict(r) for r in rows]

    async def add_event(self, incident_id: str, event: AuditEvent) -> bool:
        """Append to the audit trail; False when an event with the same ``key`` is there."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(INSERT_EVENT, event_values(incident_id, event, Jsonb))
            return cursor.rowcount == 1

    async def events(self, incident_id: str) -> list[AuditEvent]:
        """The audit trail in order."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT {', '.join(EVENT_COLUMNS)} FROM audit_events "
                "WHERE incident_id = %s ORDER BY seq",
                (incident_id,),
            )
            rows = await cursor.fetchall()
        return [event_from_row(r) for r in rows]

    @asynccontextmanager
    async def lease(self, incident_id: str) -> AsyncIterator[bool]:
        """Try to own an incident's run for the duration of the block; never waits.

        Yields True when no other worker holds the lease (this process may hold it several
        times: leases are per worker, the compare-and-set still decides between requests),
        False when a live worker does. A worker's leases vanish with its database session,
        so a crashed worker's runs become leasable, hence recoverable, at once.

        Args:
            incident_id: The incident whose run to own.

        Yields:
            Whether this worker now holds the lease.
        """
        key = advisory_key(f"rca:incident:{incident_id}")
        owned = await self._locks.try_lock(key)
        try:
            yield owned
        finally:
            if owned:
                await self._locks.unlock(key)

    @asynccontextmanager
    async def recovery_lock(self) -> AsyncIterator[None]:
        """Recover one worker at a time: wait while another worker is recovering.

        Yields:
            Nothing; the lock is held for the block.
        """
        async with advisory_lock(self._pool, RECOVERY_KEY):
            yield


def _select(tail: str) -> sql.Composed:
    """``SELECT <columns> FROM incidents <tail>``."""
    return sql.SQL("SELECT {} FROM incidents {}").format(
        sql.SQL(", ").join(map(sql.Identifier, INCIDENT_COLUMNS)), sql.SQL(tail)
    )
