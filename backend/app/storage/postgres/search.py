"""Full-text search over the incident index in PostgreSQL: a GIN index on one ``tsvector``.

The document is the incident's message, event, service, error code and summary under the
``simple`` configuration (no stemming, no stop words), split into runs of letters and digits.
The query spells the same expression, so the planner uses the expression index.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.incidents.listing import IncidentPage, IncidentQuery
from app.storage.listing import ListDialect, latest_group_statement, list_statements
from app.storage.postgres.connection import Pool

# Punctuation becomes space first, so "CO-500" is the words "co" and "500" (the parser alone
# reads "-500" as a signed number) exactly as ``search_terms`` splits a search.
DOCUMENT = (
    "to_tsvector('simple'::regconfig, regexp_replace(coalesce(message, '') || ' ' || "
    "coalesce(event, '') || ' ' || coalesce(service, '') || ' ' || coalesce(error_code, '') "
    "|| ' ' || coalesce(summary, ''), '[^[:alnum:]]+', ' ', 'g'))"
)

CREATE_INDEX = f"CREATE INDEX IF NOT EXISTS incidents_search ON incidents USING GIN (({DOCUMENT}))"


def match_value(terms: Sequence[str]) -> str:
    """A ``tsquery``: every term, each as a prefix (terms are letters and digits only)."""
    return " & ".join(f"'{term}':*" for term in terms)


POSTGRES_LIST = ListDialect(
    mark="%s",
    collate=' COLLATE "C"',
    match=f"{DOCUMENT} @@ to_tsquery('simple'::regconfig, %s)",
    match_value=match_value,
)


async def create_search(pool: Pool) -> None:
    """Create the search index if missing."""
    async with pool.connection() as conn:
        await conn.execute(CREATE_INDEX)


async def search(pool: Pool, query: IncidentQuery, columns: Sequence[str]) -> IncidentPage:
    """Run the list query: counts, the group count when grouped, one page."""
    statements = list_statements(query, columns, POSTGRES_LIST)
    async with pool.connection() as conn:
        cursor = await conn.execute(statements.counts.sql, statements.counts.params)
        counts = {str(r["status"]): int(r["n"]) for r in await cursor.fetchall()}
        cursor = await conn.execute(statements.page.sql, statements.page.params)
        rows = [dict(r) for r in await cursor.fetchall()]
        if statements.groups is not None:
            cursor = await conn.execute(statements.groups.sql, statements.groups.params)
            found = await cursor.fetchone()
            total = int(found["n"]) if found else 0
        else:
            total = counts.get(query.status, 0) if query.status else sum(counts.values())
    for row in rows:
        if "group_size" in row:
            row["group_size"] = int(row["group_size"])
    return IncidentPage(rows[: query.limit], total, counts, len(rows) > query.limit)


async def latest_group(pool: Pool, family: str, service: str | None, since: str) -> str | None:
    """The group key of the newest incident of a family and service created since ``since``."""
    async with pool.connection() as conn:
        cursor = await conn.execute(latest_group_statement("%s"), (family, service or "", since))
        found = await cursor.fetchone()
    return str(found["group_key"]) if found else None
