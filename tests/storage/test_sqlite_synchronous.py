"""RCA_SQLITE_SYNCHRONOUS reaches the connection that holds checkpoints and the index."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from app.storage.sqlite.backend import open_sqlite_backend

#: SQLite's numbers for the setting.
LEVELS = {"normal": 1, "full": 2}


@pytest.mark.parametrize("level", ["normal", "full"])
async def test_the_setting_is_the_connections(
    tmp_path: Path, level: Literal["normal", "full"]
) -> None:
    async with open_sqlite_backend(tmp_path / "state.sqlite", level) as backend:
        async with backend.connection.execute("PRAGMA synchronous") as cursor:
            row = await cursor.fetchone()
        async with backend.connection.execute("PRAGMA journal_mode") as cursor:
            mode = await cursor.fetchone()
    assert row is not None and row[0] == LEVELS[level]
    assert mode is not None and mode[0] == "wal"
