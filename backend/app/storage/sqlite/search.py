"""Full-text search over the incident index in SQLite: an FTS5 table kept in step by triggers.

``incidents_search`` holds each incident's id and its searchable text (message, event,
service, error code, summary). Triggers on ``incidents`` keep it current whatever code writes
the row, and opening a database whose search table lags (it predates the table, or was
restored without it) rebuilds it from the index.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from app.incidents.listing import IncidentPage, IncidentQuery
from app.storage.listing import ListDialect, latest_group_statement, list_statements

#: The index columns the search covers.
SEARCHED = ("message", "event", "service", "error_code", "summary")

_COLUMNS = ", ".join(SEARCHED)
_NEW = ", ".join(f"new.{c}" for c in SEARCHED)

STATEMENTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS incidents_search USING fts5("
    f"id UNINDEXED, {_COLUMNS}, tokenize = 'unicode61 remove_diacritics 2')",
    "CREATE TRIGGER IF NOT EXISTS incidents_search_insert AFTER INSERT ON incidents BEGIN "
    f"INSERT INTO incidents_search (id, {_COLUMNS}) VALUES (new.id, {_NEW}); END",
    f"CREATE TRIGGER IF NOT EXISTS incidents_search_update AFTER UPDATE OF {_COLUMNS} "
    "ON incidents BEGIN DELETE FROM incidents_search WHERE id = old.id; "
    f"INSERT INTO incidents_search (id, {_COLUMNS}) VALUES (new.id, {_NEW}); END",
    "CREATE TRIGGER IF NOT EXISTS incidents_search_delete AFTER DELETE ON incidents BEGIN "
    "DELETE FROM incidents_search WHERE id = old.id; END",
)


def match_value(terms: Sequence[str]) -> str:
    """An FTS5 query: every term, each as a prefix (terms are letters and digits only)."""
    return " ".join(f'"{term}"*' for term in terms)


SQLITE_LIST = ListDialect(
    mark="?",
    collate="",
    match="id IN (SELECT id FROM incidents_search WHERE incidents_search MATCH ?)",
    match_value=match_value,
)


async def create_search(connection: aiosqlite.Connection) -> None:
    """Create the search table and its triggers; rebuild it when it lags the index."""
    for statement in STATEMENTS:
        await connection.execute(statement)
    async with connection.execute(
        "SELECT (SELECT COUNT(*) FROM incidents), (SELECT COUNT(*) FROM incidents_search)"
    ) as cursor:
        found = await cursor.fetchone()
    if found is not None and found[0] != found[1]:
        await connection.execute("DELETE FROM incidents_search")
        await connection.execute(
            f"INSERT INTO incidents_search (id, {_COLUMNS}) SELECT id, {_COLUMNS} FROM incidents"
        )
    await connection.commit()


async def search(
    connection: aiosqlite.Connection, query: IncidentQuery, columns: Sequence[str]
) -> IncidentPage:
    """Run the list query: counts, the group count when grouped, one page."""
    statements = list_statements(query, columns, SQLITE_LIST)
    async with connection.execute(statements.counts.sql, statements.counts.params) as cursor:
        counts = {str(status): int(n) for status, n in await cursor.fetchall()}
    async with connection.execute(statements.page.sql, statements.page.params) as cursor:
        fetched = await cursor.fetchall()
    names = [*columns, "group_size"] if query.grouped else list(columns)
    rows = [dict(zip(names, row, strict=True)) for row in fetched]
    if statements.groups is not None:
        async with connection.execute(statements.groups.sql, statements.groups.params) as cursor:
            found = await cursor.fetchone()
        total = int(found[0]) if found else 0
    else:
        total = counts.get(query.status, 0) if query.status else sum(counts.values())
    return IncidentPage(rows[: query.limit], total, counts, len(rows) > query.limit)


async def latest_group(
    connection: aiosqlite.Connection, family: str, service: str | None, since: str
) -> str | None:
    """The group key of the newest incident of a family and service created since ``since``."""
    async with connection.execute(
        latest_group_statement("?"), (family, service or "", since)
    ) as cursor:
        found = await cursor.fetchone()
    return str(found[0]) if found else None
