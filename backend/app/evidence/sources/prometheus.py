"""The Prometheus source: the alert's own expression and the service's templates, summarised.

Talks to the real HTTP API with httpx (``/api/v1/query`` for the probe, ``/api/v1/query_range``
for the series). One collection:

1. **Probe** the raw samples of the incident's targets (``up{service=…}``, else any series with
   the incident's labels) over the last hour of the window: their gaps give the sample interval,
   and their first sample tells when the data begins (a target that started two minutes ago is
   not queried over fifteen).
2. **Plan** the queries: the alert's expression (its trailing ``> threshold`` split off), then
   every template of the incident's service (``app.evidence.sources.config``).
3. **Run** them concurrently at the step and rate window chosen from the data
   (``app.evidence.sources.series``); each series becomes an item ``prom:<short hash>`` with a
   one-line summary, its PromQL, its range, downsampled points and a graph-page link.

A query Prometheus rejects is reported as a problem and the others still count; an unreachable
or failing server makes the whole source unavailable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from app.evidence.sources.base import (
    CollectedItem,
    CollectionRequest,
    SourceReport,
    SourceUnavailable,
    iso,
)
from app.evidence.sources.config import SourcesConfig
from app.evidence.sources.promql import (
    QueryTemplate,
    Unit,
    escape_label_value,
    graph_url,
    render,
    split_threshold,
)
from app.evidence.sources.series import (
    Resolution,
    choose_resolution,
    downsample,
    sample_interval,
    summarize,
)

#: Series kept per query (the ones that moved most first).
MAX_SERIES_PER_QUERY = 5
#: How far back the probe reads raw samples.
PROBE_SPAN = timedelta(hours=1)
FALLBACK_PROBE_SPAN = timedelta(minutes=5)
#: Sample interval assumed when the probe finds no samples (Prometheus' default).
DEFAULT_INTERVAL_SECONDS = 15.0
ALERT_TEMPLATE = "alert"


class QueryFailed(Exception):
    """Prometheus rejected one query (bad PromQL, too many samples)."""


@dataclass(frozen=True)
class _Planned:
    template: QueryTemplate
    query: str
    key: str
    threshold: tuple[str, float] | None = None


class PrometheusSource:
    """Evidence from a Prometheus server's HTTP API.

    Args:
        base_url: The server, e.g. ``http://127.0.0.1:9090`` (``RCA_PROMETHEUS_URL``).
        config: The sources file (query templates per service).
        timeout_seconds: Limit of each HTTP request.
        transport: An httpx transport (tests may pass one; the default is the network).
    """

    name = "prometheus"

    def __init__(
        self,
        base_url: str,
        config: SourcesConfig | None = None,
        *,
        timeout_seconds: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.config = config or SourcesConfig()
        self.timeout_seconds = timeout_seconds
        self.transport = transport

    async def collect(self, request: CollectionRequest) -> SourceReport:
        """The series of the incident's alert expression and service templates.

        Raises:
            SourceUnavailable: Prometheus cannot be reached or answers with a server error.
        """
        async with httpx.AsyncClient(
            base_url=self.base_url, timeout=self.timeout_seconds, transport=self.transport
        ) as client:
            try:
                interval, data_start = await self._probe(client, request)
            except (httpx.HTTPError, QueryFailed) as exc:
                raise _unavailable(exc, self.base_url) from exc
            start = max(request.start, data_start) if data_start else request.start
            span = max((request.end - start).total_seconds(), interval)
            resolution = choose_resolution(span, interval)
            planned = self._plan(request, resolution)
            results = await asyncio.gather(
                *(self._series(client, p, start, request, resolution) for p in planned),
                return_exceptions=True,
            )
        items: list[CollectedItem] = []
        problems: list[str] = []
        for plan, result in zip(planned, results, strict=True):
            if isinstance(result, QueryFailed):
                problems.append(f"{plan.template.title}: {result}")
            elif isinstance(result, BaseException):
                raise _unavailable(result, self.base_url) from result
            else:
                items.extend(result)
        return SourceReport(items=items, problems=problems)

    def _plan(self, request: CollectionRequest, resolution: Resolution) -> list[_Planned]:
        planned: list[_Planned] = []
        if request.expression:
            split = split_threshold(request.expression)
            query = split[0] if split else request.expression
            alertname = request.label("alertname") or "alert"
            template = QueryTemplate(ALERT_TEMPLATE, f"alert {alertname}", query, Unit.VALUE)
            threshold = (split[1], split[2]) if split else None
            planned.append(_Planned(template, query, f"{ALERT_TEMPLATE}\n{query}", threshold))
        for template in self.config.templates_for(request.service):
            rendered = render(template, request, resolution.window_text)
            # The id must not change with the window, so it hashes the unfilled window.
            key = render(template, request, "$window")
            if rendered is not None and key is not None:
                planned.append(_Planned(template, rendered, f"{template.name}\n{key}"))
        return planned

    async def _probe(
        self, client: httpx.AsyncClient, request: CollectionRequest
    ) -> tuple[float, datetime | None]:
        """The sample interval and, when it began inside the probed span, the data's start."""
        matchers = [
            f'{name}="{escape_label_value(value)}"'
            for name in ("service", "job", "instance")
            if (value := request.label(name))
        ]
        selector = "{" + ",".join(matchers) + "}"
        probes = [(f"up{selector}" if matchers else "up", PROBE_SPAN)]
        if matchers:
            probes.append((selector, FALLBACK_PROBE_SPAN))
        total = (request.end - request.start).total_seconds()
        for query, span in probes:
            seconds = max(1, math.ceil(min(total, span.total_seconds())))
            data = await self._get(
                client,
                "/api/v1/query",
                {"query": f"{query}[{seconds}s]", "time": _unix(request.end)},
            )
            stamps = [
                [float(t) for t, _ in series.get("values", [])]
                for series in data.get("result", [])[:20]
            ]
            interval = sample_interval(stamps)
            if interval is None:
                continue
            first = min(s[0] for s in stamps if s)
            probed_from = request.end.timestamp() - seconds
            begins_inside = first > probed_from + 2 * interval
            return interval, datetime.fromtimestamp(first, UTC) if begins_inside else None
        return DEFAULT_INTERVAL_SECONDS, None

    async def _series(
        self,
        client: httpx.AsyncClient,
        plan: _Planned,
        start: datetime,
        request: CollectionRequest,
        resolution: Resolution,
    ) -> list[CollectedItem]:
        data = await self._get(
            client,
            "/api/v1/query_range",
            {
                "query": plan.query,
                "start": _unix(start),
                "end": _unix(request.end),
                "step": str(resolution.step),
            },
        )
        series = [
            (s.get("metric", {}), _finite(s.get("values", []))) for s in data.get("result", [])
        ]
        series = [(labels, points) for labels, points in series if points]
        series.sort(key=lambda s: -_movement(s[1]))
        series = series[:MAX_SERIES_PER_QUERY]
        varying = _varying_labels([labels for labels, _ in series])
        return [
            self._item(plan, labels, points, start, request, resolution, varying)
            for labels, points in series
        ]

    def _item(
        self,
        plan: _Planned,
        labels: dict[str, str],
        points: list[tuple[float, float]],
        start: datetime,
        request: CollectionRequest,
        resolution: Resolution,
        varying: list[str],
    ) -> CollectedItem:
        template = plan.template
        subject = _subject(request, labels, varying, template.name == ALERT_TEMPLATE)
        summary = summarize(
            points,
            title=template.title,
            subject=subject,
            unit=template.unit,
            resolution=float(max(resolution.step, resolution.window)),
            flat_below=template.flat_below,
            threshold=plan.threshold,
            since=start.timestamp(),
        )
        series_key = json.dumps(labels, sort_keys=True)
        digest = hashlib.sha256(f"{plan.key}\n{series_key}".encode()).hexdigest()[:10]
        facts: dict[str, Any] = {
            "template": template.name,
            "unit": template.unit.value,
            "trend": summary.trend.value,
            "shape": summary.shape.value,
            "baseline": None if summary.baseline is None else _round(summary.baseline),
            "peak": _round(summary.peak),
            "last": _round(summary.last),
            "peak_at": iso(datetime.fromtimestamp(summary.peak_at, UTC)),
            "labels": labels,
        }
        if summary.change_at is not None:
            facts["change_at"] = iso(datetime.fromtimestamp(summary.change_at, UTC))
        if plan.threshold:
            facts["threshold"] = {"operator": plan.threshold[0], "value": plan.threshold[1]}
        return CollectedItem(
            id=f"prom:{digest}",
            source=self.name,
            kind="metric",
            summary=summary.text,
            query=plan.query,
            range={
                "start": iso(start),
                "end": iso(request.end),
                "at": iso(request.at),
                "step": f"{resolution.step}s",
                "window": resolution.window_text,
            },
            points=downsample(points),
            facts=facts,
            url=graph_url(self.base_url, plan.query, start, request.end, resolution.step),
        )

    async def _get(
        self, client: httpx.AsyncClient, path: str, params: dict[str, str]
    ) -> dict[str, Any]:
        """The ``data`` of an API answer.

        Raises:
            QueryFailed: Prometheus rejected the query (HTTP 4xx with an error body).
            httpx.HTTPError: The request failed (transport error or server error).
        """
        response = await client.get(path, params=params)
        if 400 <= response.status_code < 500:
            raise QueryFailed(_error_text(response))
        response.raise_for_status()
        body = response.json()
        if body.get("status") != "success":
            raise QueryFailed(_error_text(response))
        data: dict[str, Any] = body.get("data") or {}
        return data


def _unavailable(exc: BaseException, base_url: str) -> SourceUnavailable:
    if isinstance(exc, QueryFailed):
        return SourceUnavailable(f"Prometheus rejected the probe: {exc}")
    if isinstance(exc, httpx.HTTPStatusError):
        return SourceUnavailable(f"Prometheus answered HTTP {exc.response.status_code}")
    if isinstance(exc, httpx.TimeoutException):
        return SourceUnavailable(f"Prometheus at {base_url} did not answer in time")
    if isinstance(exc, httpx.TransportError):
        return SourceUnavailable(f"cannot connect to Prometheus at {base_url}")
    return SourceUnavailable(f"reading Prometheus failed: {type(exc).__name__}")


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}"
    kind = str(body.get("errorType") or f"HTTP {response.status_code}")
    return f"{kind}: {str(body.get('error') or '')[:300]}".rstrip(": ")


def _unix(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _finite(values: Sequence[Sequence[Any]]) -> list[tuple[float, float]]:
    points = []
    for stamp, text in values:
        value = float(text)
        if math.isfinite(value):
            points.append((float(stamp), value))
    return points


def _movement(points: list[tuple[float, float]]) -> float:
    values = [v for _, v in points]
    return max(values) - min(values)


def _varying_labels(label_sets: list[dict[str, str]]) -> list[str]:
    names = sorted({k for labels in label_sets for k in labels if k != "__name__"})
    return [n for n in names if len({labels.get(n) for labels in label_sets}) > 1]


def _subject(
    request: CollectionRequest, labels: dict[str, str], varying: list[str], is_alert: bool
) -> str:
    """Whose series it is: the service, plus the labels that tell the series apart."""
    shown = varying if not is_alert else [k for k in sorted(labels) if k != "__name__"]
    parts = [f'{k}="{labels[k]}"' for k in shown if k in labels and k != "service"]
    service = labels.get("service") or request.service
    if service:
        parts.insert(0, service)
    return " ".join(parts)


def _round(value: float) -> float:
    return float(f"{value:.6g}")
