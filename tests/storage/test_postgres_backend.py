"""The PostgreSQL backend in-process: setup, leases, recovery lock, schemas, the graph on it."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from app.core.errors import Conflict
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.repository import AuditEvent
from app.incidents.service import IncidentService
from app.rag.knowledge import KnowledgeBase
from app.rag.retrieve import DenseRetriever
from app.rca.extractive import ExtractiveGenerator
from app.sample_app import crash_checkout
from app.schemas import DecisionCreate, IncidentCreate
from app.storage.base import StateBackend
from app.storage.postgres.backend import open_postgres_backend
from app.storage.postgres.incidents import PostgresIncidentRepository


def service_on(backend: StateBackend, knowledge: KnowledgeBase) -> IncidentService:
    deps = GraphDeps(
        retriever=DenseRetriever(knowledge.store),
        generator=ExtractiveGenerator(),
        knowledge_version=lambda: knowledge.version,
    )
    return IncidentService(build_graph(deps, backend.checkpointer), backend.repository)


def approve() -> DecisionCreate:
    return DecisionCreate.model_validate({"action": "approve"})


def postgres_repository(backend: StateBackend) -> PostgresIncidentRepository:
    assert isinstance(backend.repository, PostgresIncidentRepository)
    return backend.repository


def tables(url: str) -> set[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
    return {(schema, name) for schema, name in found}


async def test_workers_starting_together_create_the_tables_once(
    two_workers: tuple[StateBackend, StateBackend], postgres_url: str
) -> None:
    first, second = two_workers
    assert first.name == second.name == "postgres"
    assert first.ping is not None
    await first.ping()
    created = tables(postgres_url)
    assert {("public", "incidents"), ("public", "audit_events")} <= created
    assert {("public", "alert_fingerprints"), ("public", "notification_outbox")} <= created
    assert {("public", "checkpoints"), ("public", "checkpoint_writes")} <= created
    # Reopening an existing database migrates nothing and changes nothing.
    async with open_postgres_backend(postgres_url, max_size=2):
        assert tables(postgres_url) == created


async def test_a_schema_in_the_url_keeps_every_table_there(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA tenant_a")
    url = f"{postgres_url}?options=-csearch_path%3Dtenant_a"
    async with open_postgres_backend(url, max_size=2) as backend:
        await backend.repository.insert(
            {"id": "i-1", "status": "analyzing", "created_at": "t", "updated_at": "t"}
        )
    schemas = {schema for schema, _ in tables(postgres_url)}
    assert schemas == {"tenant_a"}


async def test_a_lease_is_exclusive_between_workers_and_shared_within_one(
    two_workers: tuple[StateBackend, StateBackend],
) -> None:
    first, second = (postgres_repository(b) for b in two_workers)
    async with first.lease("i-1") as owned:
        assert owned
        async with first.lease("i-1") as again, second.lease("i-1") as other:
            assert again and not other
        async with second.lease("i-2") as unrelated:
            assert unrelated
        async with second.lease("i-1") as still_held:
            assert not still_held
    async with second.lease("i-1") as released:
        assert released


async def test_a_dead_workers_leases_are_free_at_once(
    two_workers: tuple[StateBackend, StateBackend],
) -> None:
    first, second = (postgres_repository(b) for b in two_workers)
    async with first.lease("i-1") as owned:
        assert owned
        session = await first._locks.session()
        # What a SIGKILL of the worker looks like to the server: its session goes away.
        async with two_workers[1].connection.connection() as conn:
            # With a timeout (PostgreSQL 14+) the call returns once the session has exited.
            await conn.execute(
                "SELECT pg_terminate_backend(%s, 30000)", (session.info.backend_pid,)
            )
        async with second.lease("i-1") as taken_over:
            assert taken_over
    # The surviving repository reconnects its lease session on the next lease.
    async with first.lease("i-3") as fresh:
        assert fresh


async def test_recoveries_run_one_worker_at_a_time(
    two_workers: tuple[StateBackend, StateBackend],
) -> None:
    first, second = (postgres_repository(b) for b in two_workers)
    order: list[str] = []

    async def recover(repository: PostgresIncidentRepository, name: str) -> None:
        async with repository.recovery_lock():
            order.append(f"{name} in")
            order.append(f"{name} out")

    async with first.recovery_lock():
        waiting = asyncio.create_task(recover(second, "second"))
        # Room for the second worker to try (and, were the lock broken, to get in first).
        await asyncio.sleep(0.5)
        order.append("first out")
    await waiting
    assert order == ["first out", "second in", "second out"]


async def test_create_interrupt_resume_on_the_postgres_checkpointer(
    pg_backend: StateBackend, knowledge: KnowledgeBase, postgres_url: str
) -> None:
    created = await service_on(pg_backend, knowledge).create(IncidentCreate(**crash_checkout()))
    assert created.status == "awaiting_review" and created.rca is not None

    # Another worker (own pool, own graph) sees the same pending review and decides it.
    async with open_postgres_backend(postgres_url, max_size=2) as other_backend:
        other = service_on(other_backend, knowledge)
        pending = await other.page("awaiting_review", 10, 0)
        assert [i.id for i in pending.items] == [created.id]
        assert (await other.get(created.id)).rca == created.rca
        decided = await other.decide(created.id, approve(), "ana")
        assert decided.status == "approved" and decided.final_rca == created.rca

    service = service_on(pg_backend, knowledge)
    with pytest.raises(Conflict, match="already decided"):
        await service.decide(created.id, approve(), "bob")
    final = await service.get(created.id)
    assert final.status == "approved" and final.decision is not None
    assert final.decision["reviewer"] == "ana"
    assert [e.type for e in await service.audit(created.id)] == ["created", "draft", "decision"]


async def test_a_starting_worker_recovers_only_runs_no_live_worker_owns(
    two_workers: tuple[StateBackend, StateBackend], knowledge: KnowledgeBase
) -> None:
    live, starting = two_workers
    owner = postgres_repository(live)
    now = "2026-01-01T10:00:00+00:00"
    incident: dict[str, Any] = crash_checkout()
    async with owner.lease("i-1") as owned:
        assert owned
        # The live worker's create has written its row and is running the graph.
        await owner.insert(
            {"id": "i-1", "status": "analyzing", "created_at": now, "updated_at": now}
        )
        await owner.add_event(
            "i-1", AuditEvent("created", now, None, None, None, {"incident": incident})
        )
        assert await service_on(starting, knowledge).recover() == 0
        found = await owner.get("i-1")
        assert found is not None and found["status"] == "analyzing"

    # The owner is gone (its lease with it): the next worker to start finishes the run.
    assert await service_on(starting, knowledge).recover() == 1
    found = await owner.get("i-1")
    assert found is not None and found["status"] == "awaiting_review"
    # Nothing left to recover, and the run was done once.
    assert await service_on(live, knowledge).recover() == 0
    assert [e.type for e in await owner.events("i-1")] == ["created", "draft"]
