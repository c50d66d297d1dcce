"""Run every configured source for an incident: concurrently, each with a timeout, in a budget.

``EvidenceCollector.collect`` starts all sources at once. A source that raises, or that has not
answered within its timeout, or that is still running when the total budget is spent, is named in
``Collection.unavailable`` as ``{"source": name, "reason": …}``; parts a source could not read
(one rejected query, a glob that matched nothing) are listed the same way. Whatever the others
found still counts. ``build_collector`` makes the collector the settings ask for, or None when
no source is configured -- then the graph's ``collect`` node does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from app.core.config import Settings
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS
from app.evidence.sources.base import (
    CollectionRequest,
    EvidenceSource,
    SourceReport,
    SourceUnavailable,
    parse_time,
)
from app.evidence.sources.config import load_sources_config
from app.evidence.sources.logfiles import LogFileSource
from app.evidence.sources.prometheus import PrometheusSource
from app.evidence.sources.promql import alert_expression

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Collection:
    """What one collection found.

    Attributes:
        items: Every collected item as plain data (``CollectedItem.as_dict``), sources in
            configuration order.
        unavailable: ``{"source", "reason"}`` for each source (or part of one) not read.
        seconds: How long each source took.
    """

    items: list[dict[str, Any]] = field(default_factory=list)
    unavailable: list[dict[str, str]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


class EvidenceCollector:
    """Runs sources concurrently within a per-source timeout and a total budget.

    Args:
        sources: The sources, in the order their items are listed.
        timeout_seconds: How long one source may take.
        budget_seconds: How long the whole collection may take.
        lookback: How far before the incident time the window starts.
    """

    def __init__(
        self,
        sources: Sequence[EvidenceSource],
        *,
        timeout_seconds: float = 5.0,
        budget_seconds: float = 10.0,
        lookback: timedelta = timedelta(minutes=15),
    ) -> None:
        self.sources = list(sources)
        self.timeout_seconds = timeout_seconds
        self.budget_seconds = budget_seconds
        self.lookback = lookback

    async def collect(self, request: CollectionRequest) -> Collection:
        """Ask every source about ``request``; never raises for a source's failure."""
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(self._run(source, request), name=f"collect:{source.name}")
            for source in self.sources
        ]
        pending: set[asyncio.Task[tuple[SourceReport, str | None, float]]] = set()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self.budget_seconds)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        collection = Collection()
        for source, task in zip(self.sources, tasks, strict=True):
            if task in pending:
                late = f"not finished within the {self.budget_seconds:g}s collection budget"
                collection.unavailable.append({"source": source.name, "reason": late})
                collection.seconds[source.name] = time.perf_counter() - started
                continue
            report, failure, seconds = task.result()
            collection.seconds[source.name] = seconds
            if failure is not None:
                collection.unavailable.append({"source": source.name, "reason": failure})
                continue
            collection.items.extend(item.as_dict() for item in report.items)
            collection.unavailable.extend(
                {"source": source.name, "reason": problem} for problem in report.problems
            )
        return collection

    async def _run(
        self, source: EvidenceSource, request: CollectionRequest
    ) -> tuple[SourceReport, str | None, float]:
        """The source's report, or the reason it is unavailable, and the seconds it took."""
        started = time.perf_counter()
        try:
            report = await asyncio.wait_for(source.collect(request), self.timeout_seconds)
        except SourceUnavailable as exc:
            return SourceReport(), exc.reason, time.perf_counter() - started
        except TimeoutError:
            reason = f"no answer within {self.timeout_seconds:g}s"
            return SourceReport(), reason, time.perf_counter() - started
        except Exception as exc:  # a broken source never breaks the run
            logger.warning("evidence source %s failed", source.name, exc_info=exc)
            reason = f"failed: {type(exc).__name__}"
            return SourceReport(), reason, time.perf_counter() - started
        return report, None, time.perf_counter() - started

    def request_for(
        self, incident: Mapping[str, Any], reported_at: str | None, now: datetime
    ) -> CollectionRequest:
        """The collection request for ``incident`` at ``now`` with this collector's lookback."""
        return request_for_incident(incident, reported_at, now, self.lookback)


def request_for_incident(
    incident: Mapping[str, Any],
    reported_at: str | None,
    now: datetime,
    lookback: timedelta,
) -> CollectionRequest:
    """The collection request for an incident as the graph state holds it.

    The incident time is its ``started_at`` (an alert's ``startsAt``), else when it was
    reported, never later than ``now``. The window runs from ``lookback`` before it to ``now``:
    collecting again later (re-analysis) looks at a fresh window.

    Args:
        incident: The incident (``IncidentCreate`` fields).
        reported_at: When the incident was reported (ISO 8601), if known.
        now: The time of collection (aware).
        lookback: How far before the incident time to look.

    Returns:
        The request.
    """
    at = min(parse_time(incident.get("started_at")) or parse_time(reported_at) or now, now)
    raw = incident.get("labels")
    labels = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
    if incident.get("event") and "alertname" not in labels:
        labels["alertname"] = str(incident["event"])
    service = str(incident.get("service") or labels.get("service") or "").strip() or None
    return CollectionRequest(
        service=service,
        labels=labels,
        expression=alert_expression(str(incident.get("generator_url") or "")),
        at=at,
        start=at - lookback,
        end=now,
    )


def build_collector(settings: Settings) -> EvidenceCollector | None:
    """The collector the settings ask for; None when no source is configured.

    Prometheus runs when ``RCA_PROMETHEUS_URL`` is set; log files are read when the sources
    file (``RCA_SOURCES_FILE``) names globs.

    Args:
        settings: The service settings.

    Returns:
        The collector, or None.

    Raises:
        ConfigurationError: The sources file is missing or malformed.
    """
    config = load_sources_config(settings.sources_file)
    sources: list[EvidenceSource] = []
    if settings.prometheus_url:
        sources.append(
            PrometheusSource(
                settings.prometheus_url, config, timeout_seconds=settings.collect_timeout_seconds
            )
        )
    if config.reads_logs:
        patterns = tuple(settings.error_code_patterns or DEFAULT_ERROR_CODE_PATTERNS)
        sources.append(LogFileSource(config, patterns))
    if not sources:
        return None
    return EvidenceCollector(
        sources,
        timeout_seconds=settings.collect_timeout_seconds,
        budget_seconds=settings.collect_budget_seconds,
        lookback=timedelta(minutes=settings.collect_lookback_minutes),
    )
