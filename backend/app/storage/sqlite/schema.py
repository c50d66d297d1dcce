"""The state tables in SQLite's dialect."""

from __future__ import annotations

import aiosqlite

from app.storage.schema import ColumnType, Dialect, Table, add_column, create_indexes, create_table

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
    for table in tables:
        await connection.execute(create_table(table, SQLITE))
        # SQLite has no ADD COLUMN IF NOT EXISTS: compare with the catalogue instead.
        async with connection.execute(f"PRAGMA table_info({table.name})") as cursor:
            present = {row[1] for row in await cursor.fetchall()}
        for column in table.columns:
            if column.added_later and column.name not in present:
                await connection.execute(add_column(table, column, SQLITE))
        for statement in create_indexes(table):
            await connection.execute(statement)
    await connection.commit()
