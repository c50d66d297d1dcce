"""Advisory locks: how workers sharing one database own runs, recover and take alerts.

Recovery after a crash rests on two kinds of advisory lock:

* a *lease* per in-flight incident, held by the worker analysing or deciding it on one
  long-lived session. PostgreSQL drops a session's locks when its connection closes, so a
  lease outlives its worker by nothing: a lease that can be taken means no live worker owns
  the run, and a worker starting up may finish it;
* a *recovery lock*, so that workers starting together recover one after the other.

Alert intake takes a third kind on the same session: a *fingerprint lock*, so that one alert
delivered to two workers at once opens one incident. A *setup lock* keeps workers starting
together against an empty database from racing each other's ``CREATE``.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import DictRow

from app.storage.postgres.connection import CONNECTION_KWARGS, Pool

logger = logging.getLogger(__name__)

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
