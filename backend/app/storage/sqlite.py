"""The embedded backend: one SQLite file for checkpoints, the incident index and the audit trail.

One connection serves both the checkpointer and the incident index. aiosqlite runs every
statement of a connection on one thread, so within the process writes never contend for the
file's lock (two connections did, and concurrent incidents then failed with "database is
locked"). Other processes touching the file are waited for by SQLite's busy timeout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from app.incidents.repository import SqliteIncidentRepository
from app.storage.base import StateBackend

BUSY_TIMEOUT_MS = 30_000


@asynccontextmanager
async def open_sqlite_backend(path: Path) -> AsyncIterator[StateBackend]:
    """Open (and create) the SQLite file: one connection, WAL mode, a busy timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(path) as connection:
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        checkpointer = AsyncSqliteSaver(connection)
        await checkpointer.setup()
        repository = SqliteIncidentRepository(connection)
        await repository.setup()
        yield StateBackend(
            name="sqlite", checkpointer=checkpointer, repository=repository, connection=connection
        )
