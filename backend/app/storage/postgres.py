"""The shared backend: PostgreSQL holds everything workers share.

Graph checkpoints, the incident index, the audit trail, alert fingerprints and the notification
outbox all live in one database.

Every worker of a scaled deployment opens this backend against the same database. Exactly-once
decisions rest on the index's compare-and-set ``transition`` (one ``UPDATE … WHERE status = …``,
which PostgreSQL serialises per row). Recovery after a crash rests on two kinds of advisory lock:

* a *lease* per in-flight incident, held by the worker analysing or deciding it on one
  long-lived session. PostgreSQL drops a session's locks when its connection closes, so a
  lease outlives its worker by nothing: a lease that can be taken means no live worker owns
  the run, and a worker starting up may finish it;
* a *recovery lock*, so that workers starting together recover one after the other.

Alert intake takes a third kind on the same session: a *fingerprint lock*, so that one alert
delivered to two workers at once opens one incident.

Tables are created unqualified: they land in the first schema of the connection's
``search_path`` (``public`` by default). To keep a deployment in its own schema, create the
schema and add ``options=-csearch_path%3Dyour_schema`` to ``RCA_DATABASE_URL``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg import AsyncConnection, sql
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from app.incidents.repository import COLUMNS, AuditEvent
from app.intake.fingerprints import COLUMNS as FINGERPRINT_COLUMNS
from app.intake.fingerprints import SCHEMA as FINGERPRINT_SCHEMA
from app.intake.fingerprints import FingerprintLocks, FingerprintRecord, record_from_row
from app.intake.outbox import MESSAGE_COLUMNS, OutboxMessage, OutboxStatus, message_from_row
from app.storage.base import StateBackend

logger = logging.getLogger(__name__)

Pool = AsyncConnectionPool[AsyncConnection[DictRow]]

#: Byte-order collation on the sorted text columns, so pages come out in SQLite's order.
SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS incidents (
    id TEXT COLLATE "C" PRIMARY KEY,
    status TEXT NOT NULL,
    error_code TEXT,
    service TEXT,
    confidence TEXT,
    summary TEXT,
    decided_by TEXT,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS incidents_status_created ON incidents (status, created_at)",
    "CREATE INDEX IF NOT EXISTS incidents_created ON incidents (created_at)",
    """
CREATE TABLE IF NOT EXISTS audit_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id TEXT NOT NULL,
    type TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT,
    action TEXT,
    comment TEXT,
    data JSONB NOT NULL DEFAULT '{}'::jsonb
)""",
    "CREATE INDEX IF NOT EXISTS audit_events_incident ON audit_events (incident_id, seq)",
    # The fingerprint table is plain SQL: one definition serves SQLite and PostgreSQL.
    *(statement for statement in FINGERPRINT_SCHEMA.split(";") if statement.strip()),
    """
CREATE TABLE IF NOT EXISTS notification_outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    incident_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload JSONB NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT COLLATE "C" NOT NULL,
    claimed_until TEXT COLLATE "C",
    last_error TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT COLLATE "C"
)""",
    "CREATE INDEX IF NOT EXISTS notification_outbox_due "
    "ON notification_outbox (status, next_attempt_at)",
)

#: Connection settings langgraph's Postgres checkpointer requires (and the index is happy with).
CONNECTION_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}

#: Server-side keepalives for the lease session: if a worker's host vanishes without closing
#: its socket, PostgreSQL notices within about a minute and drops the worker's leases.
LEASE_SESSION_SETTINGS = (
    "SET tcp_keepalives_idle = 30",
    "SET tcp_keepalives_interval = 10",
    "SET tcp_keepalives_count = 3",
)


def advisory_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for ``name``.

    Args:
        name: What the lock protects, e.g. ``"rca:incident:<id>"``.

    Returns:
        An integer in PostgreSQL's ``bigint`` range.
    """
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


SETUP_KEY = advisory_key("rca:setup")
RECOVERY_KEY = advisory_key("rca:recovery")


async def _try_advisory_lock(conn: AsyncConnection[DictRow], key: int) -> bool:
    """Take the session-level advisory lock ``key`` on ``conn`` if it is free."""
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS owned", (key,))
    found = await cursor.fetchone()
    return bool(found and found["owned"])


@asynccontextmanager
async def advisory_lock(pool: Pool, key: int, poll_seconds: float = 0.2) -> AsyncIterator[None]:
    """Hold a session-level advisory lock on one pooled connection, waiting for it if needed.

    Waiting polls ``pg_try_advisory_lock`` instead of blocking in ``pg_advisory_lock``: a
    session blocked inside a statement would stall the checkpointer's ``CREATE INDEX
    CONCURRENTLY`` migrations run by the lock's holder (they wait for every open
    transaction), a deadlock PostgreSQL does not detect.

    Args:
        pool: Where to borrow the connection.
        key: The advisory-lock key.
        poll_seconds: Pause between attempts while another session holds the lock.

    Yields:
        Nothing; the lock is held until the block exits (or the process dies).
    """
    async with pool.connection() as conn:
        while not await _try_advisory_lock(conn, key):
            await asyncio.sleep(poll_seconds)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


class LockSession:
    """One long-lived session per worker for advisory locks that must die with the worker.

    Locks taken here are released by PostgreSQL when the session ends, however the worker
    ends. The session is (re)opened on demand; a session that died since its last use is
    replaced once per attempt.
    """

    def __init__(self, conninfo: str) -> None:
        """Open sessions on ``conninfo`` when first needed.

        Args:
            conninfo: The pool's connection string.
        """
        self._conninfo = conninfo
        self._conn: AsyncConnection[DictRow] | None = None
        # One session per worker: concurrent first locks must not open two.
        self._guard = asyncio.Lock()

    async def session(self) -> AsyncConnection[DictRow]:
        """The session, (re)opened on demand."""
        async with self._guard:
            conn = self._conn
            if conn is None or conn.closed or conn.broken:
                if conn is not None:
                    logger.warning("lock session to PostgreSQL was lost; reconnecting")
                conn = await AsyncConnection.connect(self._conninfo, **CONNECTION_KWARGS)
                for statement in LEASE_SESSION_SETTINGS:
                    await conn.execute(statement)
                self._conn = conn
            return conn

    async def try_lock(self, key: int) -> bool:
        """``pg_try_advisory_lock`` on the session; never waits.

        Args:
            key: The advisory-lock key.

        Returns:
            Whether this worker now holds it (a session may hold a key several times).
        """
        try:
            return await self._try_lock(key)
        except psycopg.OperationalError:
            # The session died since its last use (server restart, idle kill): one new try.
            self._conn = None
            return await self._try_lock(key)

    async def unlock(self, key: int) -> None:
        """Release one hold of ``key``; a session that died meanwhile took its locks with it."""
        conn = self._conn
        if conn is None:
            return
        try:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except psycopg.OperationalError:
            logger.warning("lock session to PostgreSQL was lost while a lock was held")

    @asynccontextmanager
    async def hold(self, key: int, poll_seconds: float = 0.05) -> AsyncIterator[None]:
        """Wait for ``key`` (polling, see ``advisory_lock``) and hold it for the block.

        Args:
            key: The advisory-lock key.
            poll_seconds: Pause between attempts while another worker holds it.

        Yields:
            Nothing; the lock is held meanwhile.
        """
        while not await self.try_lock(key):
            await asyncio.sleep(poll_seconds)
        try:
            yield
        finally:
            await self.unlock(key)

    async def close(self) -> None:
        """Close the session, which releases every lock this worker holds."""
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def _try_lock(self, key: int) -> bool:
        return await _try_advisory_lock(await self.session(), key)


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
        async with self._pool.connection() as conn, conn.transaction():
            for statement in SCHEMA:
                await conn.execute(statement)

    async def insert(self, row: dict[str, Any]) -> None:
        """Add a new incident row."""
        query = sql.SQL("INSERT INTO incidents ({}) VALUES ({})").format(
            sql.SQL(", ").join(map(sql.Identifier, COLUMNS)),
            sql.SQL(", ").join(sql.Placeholder() * len(COLUMNS)),
        )
        async with self._pool.connection() as conn:
            await conn.execute(query, [row.get(c) for c in COLUMNS])

    async def get(self, incident_id: str) -> dict[str, Any] | None:
        """One row, or None."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_select("WHERE id = %s"), (incident_id,))
            found = await cursor.fetchone()
        return dict(found) if found else None

    async def update(self, incident_id: str, **fields: Any) -> None:
        """Set fields of a row unconditionally."""
        unknown = set(fields) - set(COLUMNS)
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

    async def with_status(self, *statuses: str) -> list[dict[str, Any]]:
        """Every row in one of ``statuses``, oldest first."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                _select("WHERE status = ANY(%s) ORDER BY created_at"), (list(statuses),)
            )
            rows = await cursor.fetchall()
        return [dict(r) for r in rows]

    async def add_event(self, incident_id: str, event: AuditEvent) -> None:
        """Append to the audit trail."""
        async with self._pool.connection() as conn:
            await conn.execute(
                "INSERT INTO audit_events (incident_id, type, at, actor, action, comment, data) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    incident_id,
                    event.type,
                    event.at,
                    event.actor,
                    event.action,
                    event.comment,
                    Jsonb(event.data),
                ),
            )

    async def events(self, incident_id: str) -> list[AuditEvent]:
        """The audit trail in order."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(
                "SELECT type, at, actor, action, comment, data FROM audit_events "
                "WHERE incident_id = %s ORDER BY seq",
                (incident_id,),
            )
            rows = await cursor.fetchall()
        return [
            AuditEvent(
                type=r["type"],
                at=r["at"],
                actor=r["actor"],
                action=r["action"],
                comment=r["comment"],
                data=r["data"],
            )
            for r in rows
        ]

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


class PostgresOutbox:
    """The notification outbox in the shared database.

    Claims use ``FOR UPDATE SKIP LOCKED``, so workers dispatching at the same moment take
    disjoint messages without waiting on each other.
    """

    def __init__(self, pool: Pool) -> None:
        """Query through ``pool``.

        Args:
            pool: The backend's pool.
        """
        self._pool = pool

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


def _select(tail: str) -> sql.Composed:
    """``SELECT <columns> FROM incidents <tail>``."""
    return sql.SQL("SELECT {} FROM incidents {}").format(
        sql.SQL(", ").join(map(sql.Identifier, COLUMNS)), sql.SQL(tail)
    )


@asynccontextmanager
async def open_postgres_backend(
    url: str, *, min_size: int = 1, max_size: int = 10
) -> AsyncIterator[StateBackend]:
    """Open a pool on ``url``, create the tables if needed, and yield the shared backend.

    Table creation and checkpointer migrations run under an advisory lock, so workers
    starting together against an empty database do not race each other's ``CREATE``.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool may open (the worker's database concurrency).

    Yields:
        The backend; its ``connection`` is the pool.
    """
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs=CONNECTION_KWARGS,
        open=False,
        name="rca",
    )
    await pool.open(wait=True)
    locks = LockSession(url)
    repository = PostgresIncidentRepository(pool, locks)
    try:
        checkpointer = AsyncPostgresSaver(pool)
        async with advisory_lock(pool, SETUP_KEY):
            await checkpointer.setup()
            await repository.setup()

        async def ping() -> None:
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")

        yield StateBackend(
            name="postgres",
            checkpointer=checkpointer,
            repository=repository,
            connection=pool,
            fingerprints=PostgresFingerprintStore(pool, locks),
            outbox=PostgresOutbox(pool),
            ping=ping,
        )
    finally:
        await locks.close()
        await pool.close()
