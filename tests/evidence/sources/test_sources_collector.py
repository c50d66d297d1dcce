"""The collector: sources run concurrently, each with a timeout, inside a total budget."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.helpers import make_settings

from app.evidence.sources.base import (
    CollectedItem,
    CollectionRequest,
    SourceReport,
    SourceUnavailable,
)
from app.evidence.sources.collector import (
    EvidenceCollector,
    build_collector,
    request_for_incident,
)
from app.evidence.sources.logfiles import LogFileSource
from app.evidence.sources.prometheus import PrometheusSource

NOW = datetime(2026, 11, 29, 10, 5, tzinfo=UTC)
REQUEST = CollectionRequest(
    service="checkout", labels={}, expression=None, at=NOW, start=NOW, end=NOW
)


def item(source: str, number: int) -> CollectedItem:
    return CollectedItem(
        id=f"log:{source}:{number}",
        source=source,
        kind="log",
        summary=f"line {number}",
        query="*.log",
        range={},
        lines=[{"number": number, "text": f"line {number}"}],
    )


@dataclass
class ScriptedSource:
    """A real ``EvidenceSource``: waits for ``gate`` (if any), then answers or raises."""

    name: str
    items: list[CollectedItem] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: BaseException | None = None
    gate: asyncio.Event | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False

    async def collect(self, request: CollectionRequest) -> SourceReport:
        self.started.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if self.error is not None:
            raise self.error
        return SourceReport(items=self.items, problems=self.problems)


async def test_sources_run_at_the_same_time_and_keep_their_order() -> None:
    first_gate = asyncio.Event()
    second = ScriptedSource("b", items=[item("b", 2)])
    # The first source finishes only once the second has started: they run concurrently.
    first = ScriptedSource("a", items=[item("a", 1)], gate=first_gate)

    async def open_gate() -> None:
        await second.started.wait()
        first_gate.set()

    opener = asyncio.create_task(open_gate())
    collection = await EvidenceCollector([first, second], timeout_seconds=5).collect(REQUEST)
    await opener
    assert [i["id"] for i in collection.items] == ["log:a:1", "log:b:2"]
    assert collection.unavailable == [] and set(collection.seconds) == {"a", "b"}


async def test_a_failing_source_is_named_and_the_others_still_count() -> None:
    sources = [
        ScriptedSource("prometheus", error=SourceUnavailable("cannot connect to Prometheus")),
        ScriptedSource("broken", error=RuntimeError("bug")),
        ScriptedSource("logs", items=[item("logs", 7)], problems=["no log file matches x/*.log"]),
    ]
    collection = await EvidenceCollector(sources).collect(REQUEST)
    assert [i["id"] for i in collection.items] == ["log:logs:7"]
    assert collection.unavailable == [
        {"source": "prometheus", "reason": "cannot connect to Prometheus"},
        {"source": "broken", "reason": "failed: RuntimeError"},
        {"source": "logs", "reason": "no log file matches x/*.log"},
    ]


async def test_a_source_past_its_timeout_is_unavailable() -> None:
    hanging = ScriptedSource("prometheus", gate=asyncio.Event())
    quick = ScriptedSource("logs", items=[item("logs", 1)])
    collection = await EvidenceCollector([hanging, quick], timeout_seconds=0.05).collect(REQUEST)
    assert collection.unavailable == [{"source": "prometheus", "reason": "no answer within 0.05s"}]
    assert [i["id"] for i in collection.items] == ["log:logs:1"] and hanging.cancelled


async def test_the_budget_cuts_off_whatever_is_still_running() -> None:
    hanging = ScriptedSource("prometheus", gate=asyncio.Event())
    collector = EvidenceCollector([hanging], timeout_seconds=60, budget_seconds=0.05)
    collection = await collector.collect(REQUEST)
    assert collection.unavailable == [
        {"source": "prometheus", "reason": "not finished within the 0.05s collection budget"}
    ]
    assert hanging.cancelled and collection.items == []


async def test_no_source_collects_nothing() -> None:
    collection = await EvidenceCollector([]).collect(REQUEST)
    assert collection.items == [] and collection.unavailable == []


def test_the_request_comes_from_the_incident() -> None:
    incident = {
        "service": "checkout",
        "event": "HighErrors",
        "labels": {"job": "shop", "instance": "10.0.0.5:8080"},
        "generator_url": "http://p:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1",
        "started_at": "2026-11-29T10:00:00Z",
    }
    request = request_for_incident(
        incident, "2026-11-29T10:01:00+00:00", NOW, timedelta(minutes=15)
    )
    assert request.service == "checkout" and request.expression == "up == 0"
    assert request.labels == {"job": "shop", "instance": "10.0.0.5:8080", "alertname": "HighErrors"}
    assert request.at == datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    assert request.start == datetime(2026, 11, 29, 9, 45, tzinfo=UTC) and request.end == NOW
    assert request.label("instance") == "10.0.0.5:8080" and request.label("missing") is None


def test_without_a_start_time_the_report_time_anchors_the_window() -> None:
    request = request_for_incident(
        {"message": "x"}, "2026-11-29T10:01:00+00:00", NOW, timedelta(minutes=5)
    )
    assert request.at == datetime(2026, 11, 29, 10, 1, tzinfo=UTC)
    assert request.service is None and request.expression is None and request.labels == {}
    future = request_for_incident({"started_at": "2027-01-01T00:00:00Z"}, None, NOW, timedelta(0))
    assert future.at == NOW
    service_label = request_for_incident({"labels": {"service": "pos"}}, None, NOW, timedelta(0))
    assert service_label.service == "pos"


def test_nothing_configured_builds_no_collector(tmp_path: Path) -> None:
    assert build_collector(make_settings(tmp_path)) is None


def test_settings_choose_the_sources(tmp_path: Path) -> None:
    sources_file = tmp_path / "sources.yml"
    sources_file.write_text("services:\n  checkout:\n    logs: [logs/*.log]\n")
    collector = build_collector(
        make_settings(
            tmp_path,
            prometheus_url="http://127.0.0.1:9",
            sources_file=sources_file,
            collect_timeout_seconds=2,
            collect_budget_seconds=3,
            collect_lookback_minutes=30,
        )
    )
    assert collector is not None
    prometheus, logs = collector.sources
    assert isinstance(prometheus, PrometheusSource) and prometheus.base_url == "http://127.0.0.1:9"
    assert isinstance(logs, LogFileSource)
    assert (collector.timeout_seconds, collector.budget_seconds) == (2, 3)
    assert collector.lookback == timedelta(minutes=30)
    logs_only = build_collector(make_settings(tmp_path, sources_file=sources_file))
    assert logs_only is not None and [s.name for s in logs_only.sources] == ["logs"]
