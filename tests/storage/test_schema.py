"""The one table description, rendered for SQLite and PostgreSQL, creates every state table."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
import psycopg
from psycopg_pool import AsyncConnectionPool

from app.storage.postgres.connection import CONNECTION_KWARGS
from app.storage.postgres.schema import POSTGRES
from app.storage.postgres.schema import create_tables as create_postgres_tables
from app.storage.schema import TABLES, ColumnType, Dialect, Table
from app.storage.sqlite.schema import SQLITE
from app.storage.sqlite.schema import create_tables as create_sqlite_tables

#: (name, type, not null, primary key) of one column as the database reports it.
Found = tuple[str, str, bool, bool]


def type_name(dialect: Dialect, kind: ColumnType) -> str:
    if kind is ColumnType.IDENTITY:
        return dialect.identity.split()[0].lower()
    return dialect.types[kind].lower()


def expected(table: Table, dialect: Dialect, *, key_implies_not_null: bool) -> list[Found]:
    """The columns the description asks for, as a catalogue would report them."""
    columns = []
    for c in table.columns:
        key = c.primary_key or c.type is ColumnType.IDENTITY
        not_null = not c.nullable or (key and key_implies_not_null)
        columns.append((c.name, type_name(dialect, c.type), not_null, key))
    return columns


async def sqlite_catalogue(db: aiosqlite.Connection) -> dict[str, tuple[list[Found], set]]:
    found: dict[str, tuple[list[Found], set]] = {}
    for table in TABLES:
        async with db.execute(f"PRAGMA table_info({table.name})") as cursor:
            columns = [
                (r[1], r[2].lower(), bool(r[3]), bool(r[5])) for r in await cursor.fetchall()
            ]
        indexes = set()
        async with db.execute(f"PRAGMA index_list({table.name})") as cursor:
            listed = [(r[1], bool(r[2])) for r in await cursor.fetchall()]
        for name, unique in listed:
            async with db.execute(f"PRAGMA index_info({name})") as cursor:
                on = tuple(r[2] for r in await cursor.fetchall())
            indexes.add(("unique" if unique else name, on))
        found[table.name] = (columns, indexes)
    return found


async def test_the_sqlite_rendering_creates_every_table_and_index(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "state.sqlite") as db:
        await create_sqlite_tables(db, TABLES)
        first = await sqlite_catalogue(db)
        # Opening an existing file again creates nothing and changes nothing.
        await create_sqlite_tables(db, TABLES)
        assert await sqlite_catalogue(db) == first
    for table in TABLES:
        columns, indexes = first[table.name]
        # SQLite reports only declared NOT NULL, even on a text primary key.
        assert columns == expected(table, SQLITE, key_implies_not_null=False)
        wanted = {("unique" if i.unique else i.name, i.columns) for i in table.indexes}
        # A text primary key and a UNIQUE column each come with a unique index.
        wanted |= {("unique", (c.name,)) for c in table.columns if c.unique or c.primary_key}
        assert indexes == wanted


def postgres_catalogue(url: str) -> dict[str, tuple[list[Found], set, set]]:
    found: dict[str, tuple[list[Found], set, set]] = {}
    with psycopg.connect(url) as conn:
        for table in TABLES:
            rows = conn.execute(
                "SELECT c.column_name, c.data_type, c.is_nullable, c.collation_name, "
                "EXISTS (SELECT 1 FROM information_schema.table_constraints t "
                "JOIN information_schema.key_column_usage k USING (constraint_name, table_name) "
                "WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_name = c.table_name "
                "AND k.column_name = c.column_name) "
                "FROM information_schema.columns c WHERE c.table_name = %s "
                "ORDER BY c.ordinal_position",
                (table.name,),
            ).fetchall()
            columns = [(r[0], r[1], r[2] == "NO", r[4]) for r in rows]
            collated = {r[0] for r in rows if r[3] == "C"}
            indexes = {
                r[0]
                for r in conn.execute(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table.name,)
                ).fetchall()
            }
            found[table.name] = (columns, collated, indexes)
    return found


async def test_the_postgres_rendering_creates_every_table_and_index(postgres_url: str) -> None:
    async with AsyncConnectionPool(
        postgres_url, min_size=1, max_size=1, kwargs=CONNECTION_KWARGS, open=False
    ) as pool:
        await create_postgres_tables(pool, TABLES)
        first = postgres_catalogue(postgres_url)
        await create_postgres_tables(pool, TABLES)
        assert postgres_catalogue(postgres_url) == first
    for table in TABLES:
        columns, collated, indexes = first[table.name]
        assert columns == expected(table, POSTGRES, key_implies_not_null=True)
        # Byte order on the sorted text columns, so pages come out in SQLite's order.
        assert collated == {c.name for c in table.columns if c.ordered}
        for index in table.indexes:
            assert (
                f"CREATE {'UNIQUE ' if index.unique else ''}INDEX {index.name} "
                f"ON public.{table.name} "
                f"USING btree ({', '.join(index.columns)})"
            ) in indexes
        for column in (c for c in table.columns if c.unique):
            assert any(
                d.startswith("CREATE UNIQUE INDEX") and d.endswith(f"({column.name})")
                for d in indexes
            )


async def test_an_older_audit_trail_gains_the_event_key_and_its_unique_index(
    tmp_path: Path,
) -> None:
    async with aiosqlite.connect(tmp_path / "state.sqlite") as db:
        # The audit trail as it shipped before events had keys.
        await db.execute(
            "CREATE TABLE audit_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "incident_id TEXT NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, actor TEXT, "
            "action TEXT, comment TEXT, data TEXT NOT NULL DEFAULT '{}')"
        )
        await db.execute(
            "INSERT INTO audit_events (incident_id, type, at) VALUES ('i-1', 'created', 'now')"
        )
        await db.commit()
        await create_sqlite_tables(db, TABLES)
        columns, indexes = (await sqlite_catalogue(db))["audit_events"]
        assert "key" in [c[0] for c in columns]
        assert ("unique", ("incident_id", "key")) in indexes
        async with db.execute("SELECT incident_id, type, key FROM audit_events") as cursor:
            assert await cursor.fetchall() == [("i-1", "created", None)]


async def test_an_older_postgres_audit_trail_gains_the_event_key(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE audit_events (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
            "incident_id TEXT NOT NULL, type TEXT NOT NULL, at TEXT NOT NULL, actor TEXT, "
            "action TEXT, comment TEXT, data JSONB NOT NULL DEFAULT '{}'::jsonb)"
        )
        conn.execute("INSERT INTO audit_events (incident_id, type, at) VALUES ('i-1', 'c', 'n')")
    async with AsyncConnectionPool(
        postgres_url, min_size=1, max_size=1, kwargs=CONNECTION_KWARGS, open=False
    ) as pool:
        await create_postgres_tables(pool, TABLES)
    columns, _, indexes = postgres_catalogue(postgres_url)["audit_events"]
    assert "key" in [c[0] for c in columns]
    assert any(d.startswith("CREATE UNIQUE INDEX audit_events_key") for d in indexes)
