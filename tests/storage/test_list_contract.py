"""The incident list on every backend: full-text search, filters, counts, cursors, groups."""

from __future__ import annotations

from typing import Any

import pytest

from app.incidents.listing import (
    IncidentPage,
    IncidentQuery,
    ListSort,
    decode_cursor,
    encode_cursor,
    search_terms,
)
from app.incidents.repository import IncidentRepository


def at(minute: int, second: int = 0) -> str:
    return f"2026-01-01T10:{minute:02d}:{second:02d}+00:00"


def row(incident_id: str, minute: int, **extra: Any) -> dict[str, Any]:
    values = {
        "id": incident_id,
        "status": "awaiting_review",
        "error_code": "CO-500",
        "event": "CHECKOUT_SERVICE_CRASH",
        "service": "checkout-service",
        "message": "ZeroDivisionError while calculating checkout discount",
        "summary": "checkout crashed",
        "created_at": at(minute),
        "updated_at": at(minute),
    }
    return {**values, **extra}


async def seed(repository: IncidentRepository) -> None:
    await repository.insert(row("a", 1))
    await repository.insert(row("b", 2, status="approved", summary="discount divides by zero"))
    await repository.insert(
        row(
            "c",
            3,
            error_code="POS-422-QTY",
            event="SALE_REJECTED",
            service="pos-api",
            message="sale rejected: quantity must be greater than 0",
            summary="till sends a zero quantity",
        )
    )
    await repository.insert(
        row("d", 4, error_code=None, event=None, service="wiki", message="blank page on the wiki")
    )
    await repository.insert(row("e", 5, status="rejected", confidence="low"))


async def everything(repository: IncidentRepository, query: IncidentQuery) -> list[str]:
    """Every id of a list, page by page through the cursors."""
    ids: list[str] = []
    page: IncidentPage = await repository.search(query)
    while True:
        ids += [r["id"] for r in page.rows]
        if not page.has_more:
            return ids
        after = (page.rows[-1]["created_at"], page.rows[-1]["id"])
        page = await repository.search(IncidentQuery(**{**query.__dict__, "after": after}))


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("zerodivision", {"a", "b", "e"}),  # the message, as a prefix
        ("SALE_REJECTED", {"c"}),  # the event (words split on "_")
        ("pos-api", {"c"}),  # the service
        ("co-500", {"a", "b", "e"}),  # the error code
        ("divides zero", {"b"}),  # the summary; every word must match
        ("wiki blank", {"d"}),
        ("nothing-like-this", set()),
    ],
)
async def test_search_covers_message_event_service_code_and_summary(
    repository: IncidentRepository, q: str, expected: set[str]
) -> None:
    await seed(repository)
    page = await repository.search(IncidentQuery(terms=tuple(search_terms(q))))
    assert {r["id"] for r in page.rows} == expected
    assert page.total == len(expected)


async def test_search_follows_updates_of_the_summary(repository: IncidentRepository) -> None:
    await seed(repository)
    await repository.update("d", summary="portal behind the proxy answers 502")
    found = await repository.search(IncidentQuery(terms=("proxy",)))
    assert [r["id"] for r in found.rows] == ["d"]
    assert (await repository.search(IncidentQuery(terms=("blank",)))).total == 1


async def test_filters_and_counts_agree_with_the_list(repository: IncidentRepository) -> None:
    await seed(repository)
    everything_page = await repository.search(IncidentQuery())
    assert everything_page.counts == {"awaiting_review": 3, "approved": 1, "rejected": 1}
    for status, count in everything_page.counts.items():
        page = await repository.search(IncidentQuery(status=status))
        # Counts ignore the status filter itself, so every tab shows the same numbers.
        assert page.counts == everything_page.counts
        assert page.total == count == len(page.rows)
    checkout = await repository.search(IncidentQuery(service="checkout-service"))
    assert checkout.counts == {"awaiting_review": 1, "approved": 1, "rejected": 1}
    assert {r["id"] for r in checkout.rows} == {"a", "b", "e"}
    by_code = await repository.search(IncidentQuery(error_code="POS-422-QTY"))
    assert [r["id"] for r in by_code.rows] == ["c"]
    low = await repository.search(IncidentQuery(band="low"))
    assert [r["id"] for r in low.rows] == ["e"]
    window = await repository.search(IncidentQuery(since=at(2), until=at(4)))
    assert [r["id"] for r in window.rows] == ["c", "b"]


async def test_cursor_pages_reach_every_row_once_in_each_order(
    repository: IncidentRepository,
) -> None:
    for n in range(23):
        # Pairs created at the same instant: the id breaks the tie.
        await repository.insert(row(f"i-{n:02d}", n // 2, updated_at=at(30, n)))
    newest = await everything(repository, IncidentQuery(limit=5))
    assert newest == sorted(newest, key=lambda i: (at(int(i[2:]) // 2), i), reverse=True)
    assert len(newest) == len(set(newest)) == 23
    oldest = await everything(repository, IncidentQuery(limit=4, sort=ListSort.OLDEST))
    assert oldest == list(reversed(newest))
    first = await repository.search(IncidentQuery(limit=4, sort=ListSort.UPDATED))
    assert [r["id"] for r in first.rows] == ["i-22", "i-21", "i-20", "i-19"]
    assert first.has_more and first.total == 23


async def test_grouped_list_has_one_row_per_group_with_its_size(
    repository: IncidentRepository,
) -> None:
    for n in range(5):
        await repository.insert(row(f"burst-{n}", n, group_key="family:CO-500", family="CO-500"))
    await repository.insert(row("alone", 10, group_key=None))
    await repository.insert(row("pair-1", 11, group_key="alert:ab12"))
    await repository.insert(row("pair-2", 12, group_key="alert:ab12", status="approved"))
    grouped = await repository.search(IncidentQuery(grouped=True))
    sizes = {r["id"]: r["group_size"] for r in grouped.rows}
    # The newest member stands for its group.
    assert sizes == {"pair-2": 2, "alone": 1, "burst-4": 5}
    assert grouped.total == 3
    assert grouped.counts == {"awaiting_review": 7, "approved": 1}
    waiting = await repository.search(IncidentQuery(grouped=True, status="awaiting_review"))
    assert {r["id"]: r["group_size"] for r in waiting.rows} == {
        "pair-1": 1,
        "alone": 1,
        "burst-4": 5,
    }
    paged = await repository.search(IncidentQuery(grouped=True, limit=2))
    assert len(paged.rows) == 2 and paged.has_more
    rest = await repository.search(
        IncidentQuery(
            grouped=True, limit=2, after=(paged.rows[-1]["created_at"], paged.rows[-1]["id"])
        )
    )
    assert [r["id"] for r in rest.rows] == ["burst-4"] and not rest.has_more
    members = await repository.search(IncidentQuery(group="family:CO-500"))
    assert members.total == 5 and {r["id"] for r in members.rows} == {
        f"burst-{n}" for n in range(5)
    }


async def test_latest_group_finds_the_family_within_the_window(
    repository: IncidentRepository,
) -> None:
    await repository.insert(row("old", 1, family="CO-500", group_key="g-old"))
    await repository.insert(row("new", 5, family="CO-500", group_key="g-new"))
    await repository.insert(row("other", 6, family="CO-500", service="pos-api", group_key="g-pos"))
    assert await repository.latest_group("CO-500", "checkout-service", at(0)) == "g-new"
    assert await repository.latest_group("CO-500", "checkout-service", at(6)) is None
    assert await repository.latest_group("CO-500", "pos-api", at(0)) == "g-pos"
    assert await repository.latest_group("POS-422-QTY", "pos-api", at(0)) is None


def test_cursors_are_opaque_and_belong_to_one_sort() -> None:
    cursor = encode_cursor(ListSort.NEWEST, {"id": "i-1", "created_at": at(1)})
    assert decode_cursor(cursor, ListSort.NEWEST) == (at(1), "i-1")
    with pytest.raises(Exception, match="cursor"):
        decode_cursor(cursor, ListSort.OLDEST)
    with pytest.raises(Exception, match="cursor"):
        decode_cursor("not-a-cursor!", ListSort.NEWEST)


def test_search_terms_are_words_without_syntax() -> None:
    assert search_terms('CO-500 "OR" pos_api* NEAR(') == ["co", "500", "or", "pos", "api", "near"]
    assert search_terms("") == []
