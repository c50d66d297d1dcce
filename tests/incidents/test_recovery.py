"""Recovery finishes every run and records each decision exactly once, on both backends.

The crash points are reproduced exactly instead of by timing: a tiny graph with the real
``approval`` and ``finalize`` nodes over the real checkpointer and repository, and the state a
SIGKILL leaves (a held resume value, a finished run whose events were never written) is
written the way LangGraph writes it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from tests.storage.conftest import fresh_database

from app.core.errors import ValidationFailed
from app.graph.nodes.approval import approval, route_after_approval
from app.graph.nodes.finalize import finalize
from app.graph.state import RcaState
from app.incidents.service import RESUME_CHANNEL, IncidentService, thread_config
from app.schemas import DecisionAction, DecisionCreate, IncidentCreate
from app.storage.base import StateBackend
from app.storage.postgres.backend import open_postgres_backend
from app.storage.sqlite.backend import open_sqlite_backend

DRAFT = {"summary": "pool exhausted", "hypotheses": [], "confidence": "low"}


def draft(state: RcaState) -> dict[str, Any]:
    return {"rca": DRAFT, "similar_error_docs": []}


def failing(state: RcaState) -> dict[str, Any]:
    raise RuntimeError("the vector store is gone")


def tiny_graph(backend: StateBackend, first: Any = draft) -> Any:
    graph = StateGraph(RcaState)
    graph.add_node("rca", first)
    graph.add_node("approval", approval)
    graph.add_node("finalize", finalize)
    graph.add_edge(START, "rca")
    graph.add_edge("rca", "approval")
    graph.add_conditional_edges("approval", route_after_approval, ["rca", "finalize"])
    graph.add_edge("finalize", END)
    return graph.compile(checkpointer=backend.checkpointer)


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateBackend]:
    if request.param == "sqlite":
        async with open_sqlite_backend(tmp_path / "state.sqlite") as opened:
            yield opened
        return
    with fresh_database("rca_recovery") as url:
        async with open_postgres_backend(url) as opened:
            yield opened


def body(message: str = "checkout pool exhausted") -> IncidentCreate:
    return IncidentCreate(message=message, error_code="CO-500", service="checkout")


async def decision_events(service: IncidentService, incident_id: str) -> list[Any]:
    return [e for e in await service.audit(incident_id) if e.type == "decision"]


async def test_a_held_resume_value_is_run_on_not_listed_for_review(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    created = await service.create(body())
    assert created.status.value == "awaiting_review"
    # A SIGKILL after the resume value was saved, before the approval step finished.
    config = thread_config(created.id)
    saved = await backend.checkpointer.aget_tuple(config)
    assert saved is not None
    resume = {
        "id": "d-1",
        "action": "approve",
        "reviewer": "ana",
        "comment": None,
        "decided_at": "2026-01-01T00:00:00+00:00",
    }
    await backend.checkpointer.aput_writes(
        saved.config, [(RESUME_CHANNEL, resume)], "00000000-0000-0000-0000-000000000000"
    )
    await backend.repository.transition(created.id, "awaiting_review", "deciding", "now")

    assert await service.recover() == 1
    recovered = await service.get(created.id)
    assert recovered.status.value == "approved"
    assert recovered.final_rca == DRAFT
    [event] = await decision_events(service, created.id)
    assert (event.actor, event.action) == ("ana", "approve")
    # Nothing is left for a second recovery, and it would write nothing twice.
    assert await service.recover() == 0
    await service._sync_index(created.id)
    assert len(await decision_events(service, created.id)) == 1


async def test_a_decision_applied_but_never_recorded_is_recorded_once(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    created = await service.create(body())
    await backend.repository.transition(created.id, "awaiting_review", "deciding", "now")
    edited = {**DRAFT, "summary": "a leaked connection"}
    # The graph finished the decision, then the process died before any event or index write.
    await service.graph.ainvoke(
        Command(
            resume={
                "id": "d-2",
                "action": "edit",
                "reviewer": "bo",
                "comment": "tightened",
                "decided_at": "2026-01-01T00:00:00+00:00",
                "rca": edited,
            }
        ),
        thread_config(created.id),
    )
    assert (await backend.repository.get(created.id) or {})["status"] == "deciding"

    assert await service.recover() == 1
    assert (await service.get(created.id)).status.value == "approved"
    [event] = await decision_events(service, created.id)
    assert event.actor == "bo" and event.comment == "tightened"
    assert event.data["edited_rca"] == edited and "a leaked connection" in event.data["diff"]
    assert await service.recover() == 0


async def test_a_decision_that_never_reached_the_graph_is_pending_again(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    created = await service.create(body())
    await backend.repository.transition(created.id, "awaiting_review", "deciding", "now")
    assert await service.recover() == 1
    assert (await service.get(created.id)).status.value == "awaiting_review"
    assert await decision_events(service, created.id) == []
    # The review is decidable again, and the decision is recorded once.
    decided = await service.decide(
        created.id, DecisionCreate(action=DecisionAction.REJECT, comment="noise"), "ana"
    )
    assert decided.status.value == "rejected"
    assert len(await decision_events(service, created.id)) == 1
    drafts = [e for e in await service.audit(created.id) if e.type == "draft"]
    assert len(drafts) == 1


async def test_a_create_is_checkpointed_once_and_a_crash_before_it_runs_again(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    created = await service.create(body())
    saved = [c async for c in backend.checkpointer.alist(thread_config(created.id))]
    assert len(saved) == 1  # written where the run stopped: the review interrupt
    # A SIGKILL mid-create leaves the recorded incident and no checkpoint at all.
    crashed = await service.create(body("cache node lost"))
    await backend.checkpointer.adelete_thread(crashed.id)
    await backend.repository.update(crashed.id, status="analyzing", updated_at="now")
    assert await service.recover() == 1
    rerun = await service.get(crashed.id)
    assert rerun.status.value == "awaiting_review" and rerun.rca == DRAFT
    assert rerun.incident["message"] == "cache node lost"


async def test_a_failed_create_leaves_nothing_behind(backend: StateBackend) -> None:
    service = IncidentService(tiny_graph(backend, failing), backend.repository)
    with pytest.raises(RuntimeError):
        await service.create(body())
    rows, total = await backend.repository.page(None, 10, 0)
    assert (rows, total) == ([], 0)
    assert await service.recover() == 0


async def test_an_idempotency_key_returns_the_first_incident_and_refuses_another_body(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    first, created = await service.create_once(body(), "key-1")
    again, created_again = await service.create_once(body(), "key-1")
    assert (created, created_again) == (True, False)
    assert again.id == first.id
    with pytest.raises(ValidationFailed, match="Idempotency-Key"):
        await service.create_once(body("another incident"), "key-1")
    other, _ = await service.create_once(body(), "key-2")
    assert other.id != first.id
    _, total = await backend.repository.page(None, 10, 0)
    assert total == 2


async def test_a_key_of_a_failed_create_can_be_used_again(backend: StateBackend) -> None:
    failing_service = IncidentService(tiny_graph(backend, failing), backend.repository)
    with pytest.raises(RuntimeError):
        await failing_service.create_once(body(), "key-1")
    service = IncidentService(tiny_graph(backend), backend.repository)
    created, was_created = await service.create_once(body(), "key-1")
    assert was_created and created.status.value == "awaiting_review"


async def test_nul_and_non_characters_are_stripped_on_every_backend(
    backend: StateBackend,
) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository)
    created = await service.create(
        IncidentCreate(
            message="pool\x00 exhausted\ufffe",
            logs=["line\x00one", "\udc80two"],
            labels={"team": "pay\x00ments"},
        )
    )
    stored = await service.get(created.id)
    assert stored.incident["message"] == "pool exhausted"
    assert stored.incident["logs"] == ["lineone", "two"]
    assert stored.incident["labels"] == {"team": "payments"}
    decided = await service.decide(
        created.id, DecisionCreate(action=DecisionAction.REJECT, comment="no\x00pe"), "ana"
    )
    assert decided.decision is not None and decided.decision["comment"] == "nope"


async def test_an_expired_idempotency_key_starts_a_new_create(backend: StateBackend) -> None:
    service = IncidentService(tiny_graph(backend), backend.repository, idempotency_ttl=timedelta(0))
    first, _ = await service.create_once(body(), "key-1")
    again, created = await service.create_once(body(), "key-1")
    assert created and again.id != first.id
