"""Signals from collected metric series: a rising 5xx ratio is a 5xx, a flat one is not."""

from __future__ import annotations

from typing import Any

from app.evidence import signals
from app.evidence.signals import COLLECTED, STATUS, observe_incident
from app.evidence.sources.signals import STATUS_FLAT, MetricSignal, metric_signals


def series(item_id: str, trend: str, template: str = "error_ratio") -> dict[str, Any]:
    return {
        "id": item_id,
        "kind": "metric",
        "source": "prometheus",
        "summary": f"5xx ratio of checkout-service {trend}",
        "facts": {"template": template, "unit": "ratio", "trend": trend},
    }


def test_a_rising_error_ratio_is_an_observed_5xx_tied_to_the_series() -> None:
    assert metric_signals([series("prom:aaa", "rising")]) == [
        MetricSignal(STATUS, "5xx", "prom:aaa")
    ]


def test_a_flat_error_ratio_says_5xx_stayed_flat() -> None:
    assert metric_signals([series("prom:bbb", "flat")]) == [
        MetricSignal(STATUS_FLAT, "5xx", "prom:bbb")
    ]


def test_other_series_log_records_and_unknown_trends_show_nothing() -> None:
    log = {"id": "log:app.log:3", "kind": "log", "facts": {"template": "error_ratio"}}
    items = [
        series("prom:c", "rising", template="latency_p95"),
        series("prom:d", "unknown"),
        series("prom:e", "falling"),
        log,
    ]
    assert metric_signals(items) == []


def test_the_status_kind_is_the_one_the_diagnosis_reads() -> None:
    assert STATUS == signals.STATUS


def test_observe_incident_adds_the_series_signals_as_collected_observations() -> None:
    incident = {"service": "checkout-service", "message": "HighErrorRate checkout-service"}
    observed = observe_incident(incident, [series("prom:aaa", "rising")])
    five = [o for o in observed.of(STATUS) if o.evidence_id == "prom:aaa"]
    assert [(o.value, o.source) for o in five] == [("5xx", COLLECTED)]
    flat = observe_incident(incident, [series("prom:bbb", "flat")])
    assert [o.evidence_id for o in flat.of(STATUS_FLAT)] == ["prom:bbb"]
    assert not [o for o in flat.of(STATUS) if o.evidence_id == "prom:bbb"]
