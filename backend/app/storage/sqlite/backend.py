"""Opening the embedded backend: checkpoints and every store on one SQLite connection.

Checkpoints, the incident index, the audit trail, alert fingerprints and the notification
outbox share the file. One connection serves all of them. aiosqlite runs every
statement of a connection on one thread, so within the process writes never contend for the
file's lock (two connections did, and concurrent incidents then failed with "database is
locked"). Other processes touching the file are waited for by SQLite's busy timeout.

``synchronous`` is SQLite's setting of that name (``RCA_SQLITE_SYNCHRONOUS``). In WAL mode
``normal`` keeps every commit across any crash of the process (the crash harness kills the
server mid-request) but a power cut or kernel crash may lose the last commits; ``full`` syncs
the log to disk at every commit, about 12 ms more per incident on this machine's disk (see
docs/architecture/durability.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from app.storage.base import StateBackend
from app.storage.sqlite.fingerprints import SqliteFingerprintStore
from app.storage.sqlite.incidents import SqliteIncidentRepository
from app.storage.sqlite.outbox import SqliteOutbox

BUSY_TIMEOUT_MS = 30_000


@asynccontextmanager
async def open_sqlite_backend(
    path: Path, synchronous: Literal["normal", "full"] = "normal"
) -> AsyncIterator[StateBackend]:
    """Open (and create) the SQLite file: one connection, WAL mode, a busy timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(path) as connection:
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        await connection.execute(f"PRAGMA synchronous={synchronous.upper()}")
        checkpointer = AsyncSqliteSaver(connection)
        await checkpointer.setup()
        repository = SqliteIncidentRepository(connection, checkpointer.lock)
        await repository.setup()
        fingerprints = SqliteFingerprintStore(connection)
        await fingerprints.setup()
        outbox = SqliteOutbox(connection)
        await outbox.setup()
        yield StateBackend(
            name="sqlite",
            checkpointer=checkpointer,
            repository=repository,
            connection=connection,
            fingerprints=fingerprints,
            outbox=outbox,
        )
