"""Opening the shared backend: a pool, this worker's lock session, the tables and every store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg_pool import AsyncConnectionPool

from app.storage.base import StateBackend
from app.storage.postgres.connection import CONNECTION_KWARGS, Pool
from app.storage.postgres.fingerprints import PostgresFingerprintStore
from app.storage.postgres.incidents import PostgresIncidentRepository
from app.storage.postgres.locks import SETUP_KEY, LockSession, advisory_lock
from app.storage.postgres.outbox import PostgresOutbox


@asynccontextmanager
async def open_postgres_backend(
    url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 5.0
) -> AsyncIterator[StateBackend]:
    """Open a pool on ``url``, create the tables if needed, and yield the shared backend.

    Table creation and checkpointer migrations run under an advisory lock, so workers
    starting together against an empty database do not race each other's ``CREATE``.

    Args:
        url: A libpq connection string or ``postgresql://`` URL.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool may open (the worker's database concurrency).
        timeout: Seconds a caller waits for a connection before ``PoolTimeout`` (a 503).

    Yields:
        The backend; its ``connection`` is the pool.
    """
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        kwargs=CONNECTION_KWARGS,
        open=False,
        name="rca",
    )
    await pool.open(wait=True)
    locks = LockSession(url)
    repository = PostgresIncidentRepository(pool, locks)
    fingerprints = PostgresFingerprintStore(pool, locks)
    outbox = PostgresOutbox(pool)
    try:
        checkpointer = AsyncPostgresSaver(pool)
        async with advisory_lock(pool, SETUP_KEY):
            await checkpointer.setup()
            await repository.setup()
            await fingerprints.setup()
            await outbox.setup()

        async def ping() -> None:
            async with pool.connection() as conn:
                await conn.execute("SELECT 1")

        yield StateBackend(
            name="postgres",
            checkpointer=checkpointer,
            repository=repository,
            connection=pool,
            fingerprints=fingerprints,
            outbox=outbox,
            ping=ping,
        )
    finally:
        await locks.close()
        await pool.close()
