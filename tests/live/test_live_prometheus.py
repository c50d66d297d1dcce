"""The Prometheus source against a real Prometheus, backfilled with ``promtool``.

Four shapes of 5xx ratio -- step, ramp, flat, spike -- are written as OpenMetrics counters twice:
five minutes of 1-second samples and a day of 30-second samples. The source must pick its step
and rate window from the data and summarise each shape the same way at both scales.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.helpers import free_port

from app.evaluation.backfill import backfilled_prometheus
from app.evidence.sources.base import CollectionRequest, SourceUnavailable
from app.evidence.sources.config import SourcesConfig
from app.evidence.sources.prometheus import PrometheusSource
from app.evidence.sources.series import format_time

RATE = 100.0  # requests per second
BASE = 0.002
HIGH = 0.37


@dataclass(frozen=True)
class Scale:
    """One dataset: its sample interval, its length and where the change happens."""

    name: str
    interval: int
    samples: int
    start: datetime

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.interval * (self.samples - 1))

    def at(self, fraction: float) -> datetime:
        return self.start + timedelta(seconds=round(self.interval * self.samples * fraction))


NOW = datetime.now(UTC).replace(second=0, microsecond=0)
MINUTES = Scale("m", 1, 300, NOW - timedelta(hours=3))
DAY = Scale("d", 30, 2880, NOW - timedelta(hours=30))
SCALES = (MINUTES, DAY)


def shapes(n: int) -> dict[str, Callable[[int], float]]:
    half, ramp_end, spike_end = n // 2, int(n * 0.8), n // 2 + max(10, n // 20)
    return {
        "step": lambda i: BASE if i < half else HIGH,
        "ramp": lambda i: (
            BASE if i < half else BASE + (HIGH - BASE) * min(1, (i - half) / (ramp_end - half))
        ),
        "flat": lambda i: BASE + (0.001 if i % 7 == 0 else 0.0),
        "spike": lambda i: HIGH if half <= i < spike_end else BASE,
    }


def openmetrics() -> str:
    lines = ["# TYPE http_requests counter"]
    for scale in SCALES:
        for shape, fraction in shapes(scale.samples).items():
            for code in ("200", "500"):
                total = 0.0
                for i in range(scale.samples):
                    share = fraction(i) if code == "500" else 1 - fraction(i)
                    total += RATE * scale.interval * share
                    stamp = scale.start.timestamp() + i * scale.interval
                    labels = f'service="{scale.name}-{shape}",code="{code}"'
                    lines.append(f"http_requests_total{{{labels}}} {total:.3f} {stamp:.0f}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prometheus(prometheus_binaries: None) -> Iterator[str]:
    """A real Prometheus serving the backfilled blocks on a free loopback port."""
    with backfilled_prometheus(openmetrics(), timeout=120) as url:
        yield url


def collect(url: str, scale: Scale, shape: str, config: SourcesConfig | None = None, **kw: object):
    request = CollectionRequest(
        service=f"{scale.name}-{shape}",
        labels={},
        expression=kw.pop("expression", None),  # type: ignore[arg-type]
        at=scale.at(0.5),
        start=scale.start,
        end=scale.end,
    )
    return asyncio.run(PrometheusSource(url, config).collect(request))


def by_template(report: object) -> dict[str, dict[str, object]]:
    return {i.facts["template"]: i.as_dict() for i in report.items}  # type: ignore[attr-defined]


@pytest.mark.parametrize("scale", SCALES, ids=lambda s: s.name)
@pytest.mark.parametrize(
    ("shape", "trend", "phrase"),
    [
        ("step", "rising", "rose from 0.2% to 37% at "),
        ("ramp", "rising", "rose steadily from 0.2% at "),
        ("flat", "flat", "stayed flat at 0.2"),
        ("spike", "rising", "spiked from 0.2% to 37% at "),
    ],
)
def test_each_shape_reads_the_same_at_both_scales(
    prometheus: str, scale: Scale, shape: str, trend: str, phrase: str
) -> None:
    report = collect(prometheus, scale, shape)
    assert report.problems == []
    ratio = by_template(report)["error_ratio"]
    service = f"{scale.name}-{shape}"
    assert ratio["summary"].startswith(f"5xx ratio of {service} {phrase}")
    facts = ratio["facts"]
    assert facts["trend"] == trend
    assert facts["shape"] == shape
    assert ratio["id"].startswith("prom:") and len(ratio["id"]) == len("prom:") + 10
    assert ratio["query"].startswith(f'(sum(rate(http_requests_total{{service="{service}"')
    assert 60 <= len(ratio["points"]) <= 120
    step = int(ratio["range"]["step"].rstrip("s"))
    window = int(ratio["range"]["window"].rstrip("s"))
    if scale is MINUTES:
        assert (step, window) == (2, 4)
    else:
        assert (step, window) == (360, 390)
    if trend == "rising":
        change = datetime.fromisoformat(facts["change_at"].replace("Z", "+00:00"))
        assert (
            scale.at(0.5) - timedelta(seconds=window)
            <= change
            <= scale.at(0.5) + timedelta(seconds=2 * window)
        )
        assert format_time(change.timestamp(), False) in ratio["summary"]
    assert ratio["url"].startswith(f"{prometheus}/graph?g0.expr=")


def test_the_alert_expression_is_run_without_its_threshold(prometheus: str) -> None:
    expression = (
        'sum by (service) (rate(http_requests_total{service="m-step",code="500"}[10s]))'
        ' / sum by (service) (rate(http_requests_total{service="m-step"}[10s])) > 0.1'
    )
    report = collect(prometheus, MINUTES, "step", expression=expression)
    alert = by_template(report)["alert"]
    assert alert["query"] == expression.rsplit(" > ", 1)[0]
    assert alert["summary"].startswith("alert alert of m-step rose from 0.002 to 0.37 at ")
    assert alert["summary"].endswith("(alert threshold > 0.1)")
    assert alert["facts"]["threshold"] == {"operator": ">", "value": 0.1}
    assert alert["facts"]["labels"] == {"service": "m-step"}


def test_a_rejected_template_is_a_problem_and_the_rest_still_count(prometheus: str) -> None:
    config = SourcesConfig({"defaults": {"queries": [{"name": "broken", "query": "sum(rate("}]}})
    report = collect(prometheus, MINUTES, "flat", config)
    assert "error_ratio" in by_template(report)
    [problem] = report.problems
    assert problem.startswith("broken: bad_data: ")


def test_a_service_without_series_collects_nothing(prometheus: str) -> None:
    report = collect(prometheus, Scale("nobody", 1, 300, MINUTES.start), "step")
    assert report.items == [] and report.problems == []


def test_an_unreachable_prometheus_is_unavailable() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SourceUnavailable, match=f"cannot connect to Prometheus at {url}"):
        collect(url, MINUTES, "step")


def test_collected_ids_are_stable_across_windows(prometheus: str, tmp_path: Path) -> None:
    first = by_template(collect(prometheus, MINUTES, "step"))["error_ratio"]
    request = CollectionRequest(
        service="m-step",
        labels={},
        expression=None,
        at=MINUTES.at(0.5),
        start=MINUTES.start + timedelta(seconds=60),
        end=MINUTES.end,
    )
    again = by_template(asyncio.run(PrometheusSource(prometheus).collect(request)))["error_ratio"]
    assert again["id"] == first["id"] and again["range"] != first["range"]
