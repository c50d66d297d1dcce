"""The ``collect`` node in the graph: first, again on re-analysis, and absent when unconfigured."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from tests.helpers import free_port

from app.evidence.sources.collector import EvidenceCollector
from app.evidence.sources.config import SourcesConfig
from app.evidence.sources.logfiles import LogFileSource
from app.evidence.sources.prometheus import PrometheusSource
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.redaction import Redactor
from app.rag.knowledge import KnowledgeBase
from app.rag.retrieve import DenseRetriever
from app.rca.extractive import ExtractiveGenerator

INCIDENT = {
    "service": "checkout-service",
    "event": "CheckoutErrorRatioHigh",
    "message": "checkout-service answers HTTP 500 to more than 10% of checkouts",
}


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def error_record(moment: datetime, detail: str) -> str:
    return (
        f"{stamp(moment)} ERROR checkout-service POST /checkout status=500 {detail}\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/shop/checkout_service.py", line 33, in calculate_discount\n'
        "    per_unit = promotion.basket_discount_cents // qualifying_units(items)\n"
        "ZeroDivisionError: integer division or modulo by zero\n"
    )


def graph_with(knowledge: KnowledgeBase, collector: EvidenceCollector | None) -> Any:
    deps = GraphDeps(
        retriever=DenseRetriever(knowledge.store),
        generator=ExtractiveGenerator(),
        knowledge_version=lambda: knowledge.version,
        collector=collector,
        redact=Redactor().data,
    )
    return build_graph(deps, InMemorySaver())


def log_collector(tmp_path: Path, *extra: PrometheusSource) -> EvidenceCollector:
    config = SourcesConfig(
        {"services": {"checkout-service": {"logs": ["logs/*.log"]}}}, base_dir=tmp_path
    )
    return EvidenceCollector([*extra, LogFileSource(config)], timeout_seconds=5)


async def test_collected_evidence_reaches_the_query_the_draft_and_the_reviewer(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "checkout.log").write_text(
        f"{stamp(now - timedelta(minutes=2))} INFO checkout-service POST /checkout status=200\n"
        + error_record(now - timedelta(minutes=1), "checkout failed password=hunter2")
    )
    unreachable = PrometheusSource(f"http://127.0.0.1:{free_port()}", timeout_seconds=2)
    graph = graph_with(knowledge, log_collector(tmp_path, unreachable))
    config = {"configurable": {"thread_id": "c-1"}}
    out = await graph.ainvoke({"incident_id": "c-1", "incident": dict(INCIDENT)}, config)

    payload = out["__interrupt__"][0].value
    [item] = payload["collected_evidence"]
    assert (
        item["id"] == "log:checkout.log:2"
        and item["facts"]["exception_type"] == "ZeroDivisionError"
    )
    assert "hunter2" not in str(item) and "[REDACTED:secret]" in item["lines"][0]["text"]
    [unavailable] = payload["sources_unavailable"]
    assert unavailable["source"] == "prometheus"
    assert unavailable["reason"].startswith("cannot connect to Prometheus at http://127.0.0.1:")

    state = (await graph.aget_state(config)).values
    assert "ZeroDivisionError" in state["query"]
    assert state["similar_error_docs"][0]["metadata"]["error_code"] == "CO-500"
    cited = [c["id"] for cl in state["rca"]["hypotheses"][0]["claims"] for c in cl["evidence"]]
    assert item["id"] in cited
    assert state["dropped_evidence_ids"] == []


async def test_reanalysis_collects_again_over_a_fresh_window(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    log_file = tmp_path / "logs" / "checkout.log"
    log_file.parent.mkdir()
    log_file.write_text(error_record(now - timedelta(minutes=1), "checkout failed"))
    graph = graph_with(knowledge, log_collector(tmp_path))
    config = {"configurable": {"thread_id": "c-2"}}
    await graph.ainvoke({"incident_id": "c-2", "incident": dict(INCIDENT)}, config)
    first = (await graph.aget_state(config)).values
    assert [i["id"] for i in first["collected_evidence"]] == ["log:checkout.log:1"]

    with log_file.open("a") as handle:
        handle.write(f"{stamp(datetime.now(UTC))} ERROR checkout-service payment client gave up\n")
    resume = {"action": "reanalyze", "reviewer": "ana", "comment": "look again", "decided_at": "t"}
    out = await graph.ainvoke(Command(resume=resume), config)
    again = out["__interrupt__"][0].value
    assert [i["id"] for i in again["collected_evidence"]] == [
        "log:checkout.log:1",
        "log:checkout.log:6",
    ]
    second = (await graph.aget_state(config)).values
    assert second["collected_at"] >= first["collected_at"]
    assert len(second["drafts"]) == 1


async def test_without_sources_the_state_is_as_before(knowledge: KnowledgeBase) -> None:
    graph = graph_with(knowledge, None)
    config = {"configurable": {"thread_id": "c-3"}}
    out = await graph.ainvoke({"incident_id": "c-3", "incident": dict(INCIDENT)}, config)
    state = (await graph.aget_state(config)).values
    assert not {"collected_evidence", "sources_unavailable", "collected_at"} & set(state)
    assert out["__interrupt__"][0].value["collected_evidence"] == []
