"""The state tables in PostgreSQL's dialect.

Byte-order collation (``COLLATE "C"``) on the ordered text columns, so pages come out in
SQLite's order; JSON as ``JSONB``; auto-numbered keys as identity columns.

Tables are created unqualified: they land in the first schema of the connection's
``search_path`` (``public`` by default). To keep a deployment in its own schema, create the
schema and add ``options=-csearch_path%3Dyour_schema`` to ``RCA_DATABASE_URL``.
"""

from __future__ import annotations

from app.storage.postgres.connection import Pool
from app.storage.schema import ColumnType, Dialect, Table, render

POSTGRES = Dialect(
    name="postgres",
    types={ColumnType.TEXT: "TEXT", ColumnType.INTEGER: "INTEGER", ColumnType.JSON: "JSONB"},
    identity="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    ordered_collation='COLLATE "C"',
    json_default_cast="::jsonb",
    add_column_if_missing=True,
)


async def create_tables(pool: Pool, tables: tuple[Table, ...]) -> None:
    """Create ``tables`` and their indexes where missing, in one transaction.

    Args:
        pool: The backend's pool.
        tables: The tables one store keeps.
    """
    async with pool.connection() as conn, conn.transaction():
        for statement in render(POSTGRES, tables):
            await conn.execute(statement)
