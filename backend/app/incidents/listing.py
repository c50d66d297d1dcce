"""The incident list: what a query can ask for, what a page holds, and the opaque cursor.

``GET /api/incidents`` filters the index (full-text ``q`` over message, event, service, error
code and summary; status, service, error code, band, a creation-time range, a group), sorts it
and pages through it with keyset cursors: a cursor names the last row of the previous page
(its sort value and id), so a page never skips or repeats a row when incidents arrive
meanwhile. Counts per status use the same filters without the status one, so each count is the
length of the list that status would show. Grouping (one row per group of similar incidents,
with the group's size) is opt-in. The state backends implement the query
(``IncidentRepository.search``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from app.core.errors import ValidationFailed


class ListSort(StrEnum):
    """The orders a list can come in; every one ends with the id as a tie-breaker."""

    NEWEST = "newest"
    OLDEST = "oldest"
    UPDATED = "updated"


#: Per sort: the column it orders by and whether it runs descending.
SORT_KEYS: dict[ListSort, tuple[str, bool]] = {
    ListSort.NEWEST: ("created_at", True),
    ListSort.OLDEST: ("created_at", False),
    ListSort.UPDATED: ("updated_at", True),
}

#: Words of a search, as both backends' full-text indexes split text (runs of letters and digits).
_TERM_RE = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 12


def search_terms(q: str | None) -> list[str]:
    """The words of a search, lower-cased, at most ``MAX_TERMS``; each matches as a prefix.

    Args:
        q: What the reviewer typed.

    Returns:
        The terms every match must contain (as a word or a word's beginning).
    """
    return [t.lower() for t in _TERM_RE.findall(q or "")][:MAX_TERMS]


@dataclass(frozen=True)
class IncidentQuery:
    """One list request, validated.

    Attributes:
        terms: Full-text terms (all must match, each as a prefix); empty for no search.
        status: Only this status.
        service: Only this service (exact).
        error_code: Only this error code (exact).
        band: Only this confidence band.
        since: Created at or after this UTC ISO time.
        until: Created before this UTC ISO time.
        group: Only the members of this group.
        grouped: One row per group (the newest member, with the group's size).
        sort: The order.
        limit: Rows per page.
        after: The cursor position (sort value, id) of the previous page's last row.
    """

    terms: tuple[str, ...] = ()
    status: str | None = None
    service: str | None = None
    error_code: str | None = None
    band: str | None = None
    since: str | None = None
    until: str | None = None
    group: str | None = None
    grouped: bool = False
    sort: ListSort = ListSort.NEWEST
    limit: int = 50
    after: tuple[str, str] | None = None


@dataclass
class IncidentPage:
    """One page of rows with the totals for the query.

    Attributes:
        rows: Index rows in order; in a grouped list each has ``group_size``.
        total: Rows the whole list holds (groups when grouped).
        counts: Incidents per status under every filter except the status one.
        has_more: Whether another page follows.
    """

    rows: list[dict[str, Any]]
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    has_more: bool = False


def encode_cursor(sort: ListSort, row: dict[str, Any]) -> str:
    """The opaque cursor that continues after ``row`` in ``sort`` order."""
    column, _ = SORT_KEYS[sort]
    payload = json.dumps([sort.value, row[column], row["id"]], separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, sort: ListSort) -> tuple[str, str]:
    """The position a cursor names; 422 for a cursor this list did not hand out.

    Args:
        cursor: A previous page's ``next_cursor``.
        sort: The order of this request (a cursor belongs to one order).

    Returns:
        The (sort value, id) to continue after.

    Raises:
        ValidationFailed: The cursor is malformed or from another order.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValidationFailed("cursor is not one this list handed out") from exc
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(v, str) for v in value)
        or value[0] != sort.value
    ):
        raise ValidationFailed("cursor is not one this list handed out for this sort")
    return value[1], value[2]


def make_query(
    *,
    q: str | None = None,
    status: str | None = None,
    service: str | None = None,
    error_code: str | None = None,
    band: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    group: str | None = None,
    grouped: bool = False,
    sort: ListSort = ListSort.NEWEST,
    limit: int = 50,
    cursor: str | None = None,
) -> IncidentQuery:
    """An ``IncidentQuery`` from request parameters (times to UTC, the cursor decoded).

    Raises:
        ValidationFailed: The cursor is not one this list handed out, or the range is empty.
    """

    def utc(value: datetime | None) -> str | None:
        return value.astimezone(UTC).isoformat() if value is not None else None

    if since is not None and until is not None and until <= since:
        raise ValidationFailed("'until' must be later than 'since'")
    return IncidentQuery(
        terms=tuple(search_terms(q)),
        status=status,
        service=service or None,
        error_code=error_code or None,
        band=band,
        since=utc(since),
        until=utc(until),
        group=group or None,
        grouped=grouped,
        sort=sort,
        limit=limit,
        after=decode_cursor(cursor, sort) if cursor else None,
    )
