"""The state tables in SQLite's dialect."""

from __future__ import annotations

import aiosqlite

from app.storage.schema import ColumnType, Dialect, Table, render

SQLITE = Dialect(
    name="sqlite",
    types={ColumnType.TEXT: "TEXT", ColumnType.INTEGER: "INTEGER", ColumnType.JSON: "TEXT"},
    identity="INTEGER PRIMARY KEY AUTOINCREMENT",
)


async def create_tables(connection: aiosqlite.Connection, tables: tuple[Table, ...]) -> None:
    """Create ``tables`` and their indexes where missing, and commit.

    Args:
        connection: The backend's connection.
        tables: The tables one store keeps.
    """
    await connection.executescript("".join(f"{s};\n" for s in render(SQLITE, tables)))
    await connection.commit()
