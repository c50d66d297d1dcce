"""The embedded backend: one SQLite file for checkpoints, the incident index and the audit trail."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from app.incidents.repository import SqliteIncidentRepository
from app.storage.base import StateBackend


@asynccontextmanager
async def open_sqlite_backend(path: Path) -> AsyncIterator[StateBackend]:
    """Open (and create) the SQLite file; two connections, WAL mode, busy timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    async with (
        aiosqlite.connect(path) as checkpoint_db,
        aiosqlite.connect(path) as index_db,
    ):
        await checkpoint_db.execute("PRAGMA journal_mode=WAL")
        for connection in (checkpoint_db, index_db):
            # A busy database is retried by SQLite itself for up to 5 s before failing.
            await connection.execute("PRAGMA busy_timeout=5000")
        checkpointer = AsyncSqliteSaver(checkpoint_db)
        await checkpointer.setup()
        repository = SqliteIncidentRepository(index_db)
        await repository.setup()
        yield StateBackend(
            name="sqlite", checkpointer=checkpointer, repository=repository, connection=index_db
        )
