"""The incident list as SQL, written once for both backends.

``list_statements`` turns an ``IncidentQuery`` into the statements a backend runs: counts per
status (every filter except the status one), the number of groups when grouped, and one page
in keyset order (``limit + 1`` rows, so the backend knows whether another page follows). A
``ListDialect`` supplies what differs: the parameter mark, the byte-order collation of sorted
text and the full-text match (SQLite FTS5, PostgreSQL ``tsvector``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.incidents.listing import SORT_KEYS, IncidentQuery

#: The key a group is known by: its ``group_key``, or the incident's own id when ungrouped.
GROUP_OF = "COALESCE(group_key, id)"


@dataclass(frozen=True)
class ListDialect:
    """What one backend spells differently in the list's SQL.

    Attributes:
        mark: The parameter placeholder (``?`` or ``%s``).
        collate: Appended to sorted and compared text so both backends order bytes alike.
        match: A condition with one ``mark`` that holds when an incident matches the search.
        match_value: The value bound to ``match`` for the search terms.
    """

    mark: str
    collate: str
    match: str
    match_value: Callable[[Sequence[str]], str]


@dataclass(frozen=True)
class Statement:
    """One SQL statement and its parameters."""

    sql: str
    params: list[Any]


@dataclass(frozen=True)
class ListStatements:
    """What a backend runs for one list request.

    Attributes:
        counts: ``(status, count)`` rows.
        groups: One row holding the number of groups (grouped lists only).
        page: The page's rows (``limit + 1`` at most); grouped rows add ``group_size``.
    """

    counts: Statement
    groups: Statement | None
    page: Statement


def _filters(
    query: IncidentQuery, dialect: ListDialect, *, with_status: bool
) -> tuple[str, list[Any]]:
    """The WHERE clause of the query's filters (``TRUE`` without any) and its parameters."""
    mark = dialect.mark
    conditions: list[str] = []
    params: list[Any] = []
    exact = [
        ("status", query.status if with_status else None),
        ("service", query.service),
        ("error_code", query.error_code),
        ("confidence", query.band),
        ("group_key", query.group),
    ]
    for column, value in exact:
        if value is not None:
            conditions.append(f"{column} = {mark}")
            params.append(value)
    if query.since is not None:
        conditions.append(f"created_at{dialect.collate} >= {mark}")
        params.append(query.since)
    if query.until is not None:
        conditions.append(f"created_at{dialect.collate} < {mark}")
        params.append(query.until)
    if query.terms:
        conditions.append(dialect.match)
        params.append(dialect.match_value(query.terms))
    return (" AND ".join(conditions) or "1 = 1"), params


def _keyset(query: IncidentQuery, dialect: ListDialect) -> tuple[str, str, list[Any]]:
    """The ORDER BY, the condition continuing after the cursor ('' without one), its params."""
    column, descending = SORT_KEYS[query.sort]
    c, mark = dialect.collate, dialect.mark
    direction = "DESC" if descending else "ASC"
    order = f"{column}{c} {direction}, id{c} {direction}"
    if query.after is None:
        return order, "", []
    beyond = "<" if descending else ">"
    value, last_id = query.after
    condition = f"({column}{c} {beyond} {mark} OR ({column}{c} = {mark} AND id{c} {beyond} {mark}))"
    return order, condition, [value, value, last_id]


def list_statements(
    query: IncidentQuery, columns: Sequence[str], dialect: ListDialect
) -> ListStatements:
    """The statements answering ``query``.

    Args:
        query: The validated list request.
        columns: The index columns each row carries.
        dialect: The backend's spelling.

    Returns:
        The counts, the group count (grouped lists) and the page statements.
    """
    unfiltered_where, unfiltered_params = _filters(query, dialect, with_status=False)
    counts = Statement(
        f"SELECT status, COUNT(*) AS n FROM incidents WHERE {unfiltered_where} GROUP BY status",
        unfiltered_params,
    )
    where, params = _filters(query, dialect, with_status=True)
    order, after, after_params = _keyset(query, dialect)
    selected = ", ".join(columns)
    limit = f"LIMIT {int(query.limit) + 1}"
    if not query.grouped:
        condition = f"{where} AND {after}" if after else where
        page = Statement(
            f"SELECT {selected} FROM incidents WHERE {condition} ORDER BY {order} {limit}",
            [*params, *after_params],
        )
        return ListStatements(counts, None, page)
    c = dialect.collate
    members = (
        f"SELECT {selected}, COUNT(*) OVER (PARTITION BY {GROUP_OF}) AS group_size, "
        f"ROW_NUMBER() OVER (PARTITION BY {GROUP_OF} ORDER BY created_at{c} DESC, id{c} DESC) "
        f"AS member_rank FROM incidents WHERE {where}"
    )
    outer = "member_rank = 1" + (f" AND {after}" if after else "")
    page = Statement(
        f"SELECT {selected}, group_size FROM ({members}) AS members "
        f"WHERE {outer} ORDER BY {order} {limit}",
        [*params, *after_params],
    )
    groups = Statement(
        f"SELECT COUNT(DISTINCT {GROUP_OF}) AS n FROM incidents WHERE {where}", list(params)
    )
    return ListStatements(counts, groups, page)


def latest_group_statement(mark: str) -> str:
    """The newest group key of a family and service created at or after a time.

    Parameters, in order: family, service (``''`` for none), the earliest creation time.
    """
    return (
        f"SELECT group_key FROM incidents WHERE family = {mark} "
        f"AND COALESCE(service, '') = {mark} AND created_at >= {mark} "
        "AND group_key IS NOT NULL ORDER BY created_at DESC LIMIT 1"
    )
