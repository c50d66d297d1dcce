"""One contract for every ``IncidentRepository``: the SQLite and the PostgreSQL implementations."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.incidents.repository import AuditEvent, IncidentRepository


def row(incident_id: str, created_at: str, status: str = "awaiting_review", **extra: Any) -> dict:
    return {
        "id": incident_id,
        "status": status,
        "error_code": "CO-500",
        "service": "checkout",
        "created_at": created_at,
        "updated_at": created_at,
        **extra,
    }


def at(minute: int) -> str:
    return f"2026-01-01T10:{minute:02d}:00+00:00"


async def test_insert_then_get_round_trips_every_column(repository: IncidentRepository) -> None:
    await repository.insert(
        row("i-1", at(0), confidence="high", summary="pool exhausted", decided_by=None)
    )
    assert await repository.get("i-1") == {
        "id": "i-1",
        "status": "awaiting_review",
        "error_code": "CO-500",
        "service": "checkout",
        "confidence": "high",
        "summary": "pool exhausted",
        "decided_by": None,
        "created_at": at(0),
        "updated_at": at(0),
        "message": None,
        "event": None,
        "assignee": None,
        "decision_action": None,
        "family": None,
        "group_key": None,
    }
    assert await repository.get("missing") is None


async def test_insert_twice_is_refused(repository: IncidentRepository) -> None:
    await repository.insert(row("i-1", at(0)))
    with pytest.raises(Exception):  # noqa: B017 - each engine has its own integrity error
        await repository.insert(row("i-1", at(1)))


async def test_update_sets_only_the_given_fields(repository: IncidentRepository) -> None:
    await repository.insert(row("i-1", at(0), summary="draft"))
    await repository.update("i-1", status="approved", decided_by="ana", updated_at=at(5))
    found = await repository.get("i-1")
    assert found is not None
    assert (found["status"], found["decided_by"], found["updated_at"]) == ("approved", "ana", at(5))
    assert (found["summary"], found["created_at"]) == ("draft", at(0))
    with pytest.raises(ValueError, match="unknown incident columns"):
        await repository.update("i-1", status="x", owner="mallory")


async def test_transition_is_compare_and_set(repository: IncidentRepository) -> None:
    await repository.insert(row("i-1", at(0)))
    assert await repository.transition("i-1", "analyzing", "deciding", at(1)) is False
    assert await repository.transition("i-1", "awaiting_review", "deciding", at(2)) is True
    assert await repository.transition("i-1", "awaiting_review", "deciding", at(3)) is False
    assert await repository.transition("missing", "awaiting_review", "deciding", at(3)) is False
    found = await repository.get("i-1")
    assert found is not None and (found["status"], found["updated_at"]) == ("deciding", at(2))


async def test_concurrent_transitions_have_exactly_one_winner(
    repository: IncidentRepository,
) -> None:
    await repository.insert(row("i-1", at(0)))
    results = await asyncio.gather(
        *(repository.transition("i-1", "awaiting_review", "deciding", at(1)) for _ in range(20))
    )
    assert results.count(True) == 1


async def test_page_is_newest_first_with_filter_total_and_offset(
    repository: IncidentRepository,
) -> None:
    await repository.insert(row("a", at(1)))
    await repository.insert(row("b", at(3), status="approved"))
    await repository.insert(row("c", at(2)))
    await repository.insert(row("d", at(2)))  # same instant as "c": the id breaks the tie
    await repository.insert(row("e", at(4), status="analyzing"))

    rows, total = await repository.page(None, 10, 0)
    assert [r["id"] for r in rows] == ["e", "b", "d", "c", "a"] and total == 5
    rows, total = await repository.page(None, 2, 1)
    assert [r["id"] for r in rows] == ["b", "d"] and total == 5
    rows, total = await repository.page("awaiting_review", 2, 0)
    assert [r["id"] for r in rows] == ["d", "c"] and total == 3
    rows, total = await repository.page("awaiting_review", 2, 2)
    assert [r["id"] for r in rows] == ["a"] and total == 3
    rows, total = await repository.page("rejected", 10, 0)
    assert rows == [] and total == 0


async def test_with_status_is_oldest_first(repository: IncidentRepository) -> None:
    await repository.insert(row("late", at(9), status="deciding"))
    await repository.insert(row("done", at(1), status="approved"))
    await repository.insert(row("early", at(2), status="analyzing"))
    found = await repository.with_status("analyzing", "deciding")
    assert [r["id"] for r in found] == ["early", "late"]
    assert found[0]["service"] == "checkout"
    assert await repository.with_status("rejected") == []


async def test_events_keep_order_data_and_incident(repository: IncidentRepository) -> None:
    await repository.insert(row("i-1", at(0)))
    await repository.insert(row("i-2", at(0)))
    created = AuditEvent(
        "created", at(0), None, None, None, {"incident": {"error_code": "CO-500", "n": [1, 2]}}
    )
    other = AuditEvent("created", at(0), None, None, None, {})
    decided = AuditEvent("decision", at(1), "ana", "approve", "looks right", {"edited_rca": None})
    await repository.add_event("i-1", created)
    await repository.add_event("i-2", other)
    await repository.add_event("i-1", decided)
    assert await repository.events("i-1") == [created, decided]
    assert await repository.events("i-2") == [other]
    assert await repository.events("missing") == []
