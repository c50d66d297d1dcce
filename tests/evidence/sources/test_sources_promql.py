"""PromQL templates: rendering from the incident's labels, the alert's own expression."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.evidence.sources.base import CollectionRequest
from app.evidence.sources.promql import (
    RED_TEMPLATES,
    QueryTemplate,
    alert_expression,
    graph_url,
    render,
    split_threshold,
)

AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def request(service: str | None = "checkout", **labels: str) -> CollectionRequest:
    return CollectionRequest(
        service=service, labels=labels, expression=None, at=AT, start=AT, end=AT
    )


def test_red_defaults_select_on_the_service_label() -> None:
    rendered = {t.name: render(t, request(), "4s") for t in RED_TEMPLATES}
    assert rendered == {
        "error_ratio": '(sum(rate(http_requests_total{service="checkout",code=~"5.."}[4s]))'
        ' or vector(0)) / sum(rate(http_requests_total{service="checkout"}[4s]))',
        "latency_p95": "histogram_quantile(0.95, sum by (le) "
        '(rate(http_request_duration_seconds_bucket{service="checkout"}[4s])))',
        "restarts": 'sum(changes(process_start_time_seconds{service="checkout"}[4s]))',
        "up": 'min(up{service="checkout"})',
    }


def test_a_template_needing_a_label_the_incident_lacks_is_skipped() -> None:
    assert all(render(t, request(service=None), "4s") is None for t in RED_TEMPLATES)
    by_job = QueryTemplate("q", "queue", 'max(queue{job="$job",instance="$instance"})')
    assert render(by_job, request(job="shop"), "4s") is None
    assert render(by_job, request(job="shop", instance="a:1"), "4s") == (
        'max(queue{job="shop",instance="a:1"})'
    )


def test_label_values_are_escaped_for_promql() -> None:
    template = RED_TEMPLATES[-1]
    assert render(template, request(service='we"ird\\svc'), "4s") == (
        'min(up{service="we\\"ird\\\\svc"})'
    )


def test_the_alert_expression_comes_from_the_generator_url() -> None:
    url = (
        "http://prometheus:9090/graph?g0.expr=sum+by+%28service%29+%28rate%28"
        "http_requests_total%7Bcode%3D~%225..%22%7D%5B5m%5D%29%29+%3E+0.1&g0.tab=1"
    )
    assert (
        alert_expression(url)
        == 'sum by (service) (rate(http_requests_total{code=~"5.."}[5m])) > 0.1'
    )
    assert alert_expression("") is None
    assert alert_expression("http://prometheus:9090/graph?g0.tab=1") is None


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("up == 0", ("up", "==", 0.0)),
        (
            'sum(rate(x{code=~"5.."}[5m])) / sum(rate(x[5m])) > 0.05',
            ('sum(rate(x{code=~"5.."}[5m])) / sum(rate(x[5m]))', ">", 0.05),
        ),
        (
            "histogram_quantile(0.95, rate(h[5m])) >= 1.5e0",
            ("histogram_quantile(0.95, rate(h[5m]))", ">=", 1.5),
        ),
        ("x > bool 3", ("x", ">", 3.0)),
        ("a > 1 and b > 2", None),
        ("a > b", None),
        ("a > 1 > 0", None),
        ('up{job=">1"}', None),
        ("rate(x[5m])", None),
    ],
)
def test_a_trailing_threshold_is_split_off(
    expression: str, expected: tuple[str, str, float] | None
) -> None:
    assert split_threshold(expression) == expected


def test_graph_link_opens_the_collected_range() -> None:
    url = graph_url("http://127.0.0.1:9090/", 'up{service="a"}', AT, AT.replace(minute=15), 2.0)
    assert url.startswith("http://127.0.0.1:9090/graph?g0.expr=up%7Bservice%3D%22a%22%7D&g0.tab=0")
    assert "g0.range_input=900s" in url and "g0.end_input=2026-11-29%2010%3A15%3A00" in url
