"""The whole graph, fresh per test: interrupt, resume, and the service's exactly-once rules."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from app.core.errors import Conflict, NotFound, ValidationFailed
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.service import IncidentService
from app.rag.knowledge import KnowledgeBase
from app.rag.retrieve import DenseRetriever
from app.rca.extractive import ExtractiveGenerator
from app.sample_app import crash_checkout
from app.schemas import DecisionCreate, IncidentCreate
from app.storage.sqlite.incidents import SqliteIncidentRepository


def graph_for(knowledge: KnowledgeBase) -> Any:
    deps = GraphDeps(
        retriever=DenseRetriever(knowledge.store),
        generator=ExtractiveGenerator(),
        knowledge_version=lambda: knowledge.version,
    )
    return build_graph(deps, InMemorySaver())


@pytest.fixture
async def service(knowledge: KnowledgeBase, tmp_path: Path) -> AsyncIterator[IncidentService]:
    async with aiosqlite.connect(tmp_path / "index.sqlite") as db:
        repository = SqliteIncidentRepository(db)
        await repository.setup()
        yield IncidentService(graph_for(knowledge), repository)


def decision(action: str, **fields: Any) -> DecisionCreate:
    return DecisionCreate.model_validate({"action": action, "reviewer": "ana", **fields})


async def test_interrupt_payload_holds_what_the_reviewer_needs(knowledge: KnowledgeBase) -> None:
    graph = graph_for(knowledge)
    config = {"configurable": {"thread_id": "t-1"}}
    incident = crash_checkout()
    out = await graph.ainvoke({"incident_id": "t-1", "incident": incident}, config)
    (pending,) = out["__interrupt__"]
    payload = pending.value
    assert payload["incident_id"] == "t-1"
    assert payload["incident"] == incident
    assert payload["allowed_actions"] == ["approve", "reject", "edit", "reanalyze"]
    assert payload["dropped_evidence_ids"] == []
    docs = payload["similar_error_docs"]
    assert docs[0]["metadata"]["error_code"] == "CO-500"
    assert len(docs) == 5 and all(
        {"id", "content", "similarity", "metadata", "why"} <= d.keys() for d in docs
    )
    rca = payload["rca"]
    assert rca["provenance"]["knowledge_version"] == knowledge.version
    cited = {c["id"] for h in rca["hypotheses"] for cl in h["claims"] for c in cl["evidence"]}
    assert docs[0]["id"] in cited
    assert any(i.startswith("incident:stack:") for i in cited)
    state = await graph.aget_state(config)
    assert state.next == ("approval",)

    final = await graph.ainvoke(
        Command(resume={"action": "approve", "reviewer": "ana", "decided_at": "t"}), config
    )
    assert final["status"] == "approved" and final["final_rca"] == rca


async def test_create_then_approve(service: IncidentService) -> None:
    created = await service.create(IncidentCreate(**crash_checkout()))
    assert created.status == "awaiting_review"
    assert created.rca is not None and created.rca["outcome"] == "analysis"
    decided = await service.decide(created.id, decision("approve"), actor="ana")
    assert decided.status == "approved"
    assert decided.final_rca == created.rca
    assert decided.decision is not None and decided.decision["reviewer"] == "ana"
    page = await service.page("approved", 10, 0)
    assert [i.id for i in page.items] == [created.id] and page.items[0].decided_by == "ana"


async def test_reject_needs_a_comment_and_keeps_review_pending(service: IncidentService) -> None:
    created = await service.create(IncidentCreate(**crash_checkout()))
    with pytest.raises(ValueError, match="comment"):
        decision("reject")
    rejected = await service.decide(created.id, decision("reject", comment="wrong family"), "ana")
    assert rejected.status == "rejected" and rejected.final_rca is None


async def test_edit_keeps_original_and_recomputes_nothing_from_client(
    service: IncidentService,
) -> None:
    created = await service.create(IncidentCreate(**crash_checkout()))
    assert created.rca is not None
    edited = {**created.rca, "summary": "Edited by the reviewer."}
    edited["hypotheses"][0]["claims"][0]["evidence"].append({"id": "error-doc-ffffffffffffffff"})
    decided = await service.decide(created.id, decision("edit", rca=edited), "ana")
    assert decided.status == "approved"
    assert decided.rca is not None and decided.rca["summary"] == created.rca["summary"]
    assert (
        decided.final_rca is not None and decided.final_rca["summary"] == "Edited by the reviewer."
    )
    final_ids = {c["id"] for c in decided.final_rca["hypotheses"][0]["claims"][0]["evidence"]}
    assert "error-doc-ffffffffffffffff" not in final_ids
    assert decided.final_rca["provenance"]["edited_by"] == "ana"


async def test_invalid_edit_is_422_and_review_stays_pending(service: IncidentService) -> None:
    created = await service.create(IncidentCreate(**crash_checkout()))
    with pytest.raises(ValidationFailed, match="summary"):
        await service.decide(created.id, decision("edit", rca={"summary": ""}), "ana")
    assert (await service.get(created.id)).status == "awaiting_review"
    assert (await service.decide(created.id, decision("approve"), "ana")).status == "approved"


async def test_second_decision_conflicts_naming_the_first_reviewer(
    service: IncidentService,
) -> None:
    created = await service.create(IncidentCreate(**crash_checkout()))
    await service.decide(created.id, decision("approve"), "ana")
    with pytest.raises(Conflict, match=r"already decided \(approved\) by ana"):
        await service.decide(created.id, decision("reject", comment="late"), "bob")


async def test_unknown_incident_is_404_and_starts_no_run(service: IncidentService) -> None:
    with pytest.raises(NotFound):
        await service.decide("no-such-id", decision("approve"), "ana")
    snapshot = await service.graph.aget_state({"configurable": {"thread_id": "no-such-id"}})
    assert snapshot.values == {} and snapshot.next == ()


async def test_reanalyze_produces_a_second_draft(service: IncidentService) -> None:
    created = await service.create(IncidentCreate(message="checkout failed for a basket"))
    again = await service.decide(
        created.id,
        decision(
            "reanalyze",
            comment="there is a traceback",
            added_evidence={
                "logs": ["ZeroDivisionError in calculate_discount"],
                "note": "see logs",
            },
        ),
        "ana",
    )
    assert again.status == "awaiting_review"
    assert len(again.drafts) == 1 and again.drafts[0] == created.rca
    assert again.incident["logs"] == ["ZeroDivisionError in calculate_discount"]
    events = [e.type for e in await service.audit(created.id)]
    assert events == ["created", "draft", "decision", "draft"]
    assert (await service.decide(created.id, decision("approve"), "ana")).status == "approved"


async def test_recover_resumes_a_run_cut_off_mid_analysis(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    """A run killed between nodes resumes from its last checkpoint on restart."""
    async with aiosqlite.connect(tmp_path / "index.sqlite") as db:
        repository = SqliteIncidentRepository(db)
        await repository.setup()
        saver = InMemorySaver()
        deps = GraphDeps(
            retriever=DenseRetriever(knowledge.store),
            generator=ExtractiveGenerator(),
            knowledge_version=lambda: knowledge.version,
        )
        stopping = build_graph(deps, saver)
        incident = crash_checkout()
        await repository.insert(
            {
                "id": "cut",
                "status": "analyzing",
                "created_at": "2026-01-01",
                "updated_at": "2026-01-01",
            }
        )
        config = {"configurable": {"thread_id": "cut"}}
        # Stop after rag as if the process died there.
        await stopping.ainvoke(
            {"incident_id": "cut", "incident": incident}, config, interrupt_before=["rca"]
        )
        assert (await stopping.aget_state(config)).next == ("rca",)
        service = IncidentService(build_graph(deps, saver), repository)
        assert await service.recover() == 1
        recovered = await service.get("cut")
        assert recovered.status == "awaiting_review" and recovered.rca is not None
