"""The retrieval query: head, parsed evidence terms, raw stack trace and log lines."""

from __future__ import annotations

from typing import Any

import pytest
from tests.evidence.helpers import PY_CHAINED_CAUSE, PY_DURING_HANDLING

from app.evidence.parse import parse_entries, parse_incident, parse_text
from app.rag.query import (
    enriched_incident_query,
    enriched_query,
    evidence_terms,
    incident_query,
    incident_query_builder,
    retrieval_query,
    spaced_name,
)


@pytest.mark.parametrize(
    ("incident", "query"),
    [
        (
            {"error_code": "PAY-408", "event": "PAYMENT_TIMEOUT", "message": "slow"},
            "PAY-408 PAYMENT_TIMEOUT slow",
        ),
        ({"message": "only a message"}, "only a message"),
        ({"error_code": " ", "event": None, "message": "m"}, "m"),
    ],
)
def test_retrieval_query_skips_missing_parts(incident: dict[str, Any], query: str) -> None:
    assert retrieval_query(incident) == query


def test_incident_query_adds_the_evidence() -> None:
    incident = {
        "error_code": "PAY-408",
        "event": " payment.timeout ",
        "message": "payments hang",
        "stack_trace": "requests.exceptions.ReadTimeout",
        "logs": ["WARN retry 3", ""],
    }
    assert incident_query(incident) == (
        "PAY-408 payment.timeout payments hang\nrequests.exceptions.ReadTimeout\nWARN retry 3"
    )
    assert incident_query({"message": "x" * 50}, max_chars=10) == "x" * 10
    assert incident_query({"message": "m", "logs": "not a list"}) == "m"


def test_routine_log_lines_are_left_out_beside_failing_ones() -> None:
    routine = [f"chiller-monitor INFO readings batch stored store=0{n} n=48" for n in range(9)]
    failing = "payment-client ERROR ReadTimeout calling https://psp.example after 30s"
    query = incident_query({"message": "web orders failing", "logs": [*routine, failing]})
    assert query == f"web orders failing\n{failing}"
    # A log of routine lines alone is searched as it is.
    quiet = incident_query({"message": "anything odd?", "logs": routine[:2]})
    assert quiet.splitlines()[1:] == routine[:2]


def test_evidence_terms() -> None:
    parsed = parse_entries(["ERROR plu-service health check failed: HTTP 503 (POS-503-PLU)"])
    terms = evidence_terms(parsed)
    assert "plu-service health check failed" in terms
    assert "POS-503-PLU" in terms and "HTTP 503 Service Unavailable" in terms
    traced = evidence_terms(parse_text(PY_CHAINED_CAUSE))
    assert traced.startswith("TimeoutError timed out")
    assert evidence_terms(parse_text("")) == ""


def test_info_noise_does_not_outrank_the_message() -> None:
    incident = {
        "message": "Card payments time out waiting for the payment provider",
        "logs": [
            "alertmanager alert=PaymentProviderSlow status=firing",
            "labels: service=checkout",
        ],
    }
    parsed = parse_incident(incident)
    assert parsed.source == "message"
    # The query already holds the message; the terms do not repeat it.
    assert evidence_terms(parsed) == ""
    assert enriched_query(incident) == retrieval_query(incident)


def test_enriched_query_is_the_plain_query_plus_the_terms() -> None:
    incident = {"message": "service error", "stack_trace": PY_DURING_HANDLING}
    expected = f"{retrieval_query(incident)} {evidence_terms(parse_incident(incident))}"
    assert enriched_query(incident) == expected
    assert "ZeroDivisionError division by zero" in enriched_query(incident)


def test_enriched_incident_query_puts_the_terms_before_the_raw_evidence() -> None:
    noise = [f"2024-06-02 10:00:{n % 60:02d} INFO  heartbeat {n}" for n in range(200)]
    incident = {
        "message": "service error",
        "stack_trace": PY_DURING_HANDLING,
        "logs": noise,
    }
    query = enriched_incident_query(incident)
    first_line = query.splitlines()[0]
    assert first_line == f"service error {evidence_terms(parse_incident(incident))}"
    assert "ZeroDivisionError division by zero" in first_line
    # The trace follows, its own frames without the boilerplate every trace has.
    assert 'File "/app/checkout_service.py", line 88, in apply_discount' in query
    assert "Traceback (most recent call last):" not in query
    assert len(query) == 2000  # the noise is cut, the terms are not


def test_the_builder_follows_the_parse_evidence_setting() -> None:
    incident = {"message": "service error", "stack_trace": "E1234 driver gone"}
    plain = incident_query_builder(parse_evidence=False)(incident)
    assert plain == incident_query(incident) == "service error\nE1234 driver gone"
    assert incident_query_builder()(incident) == enriched_incident_query(incident) == plain
    configured = incident_query_builder(patterns=[r"\bE\d{4}\b"])(incident)
    assert configured == "service error E1234\nE1234 driver gone"


def test_a_camel_case_alert_name_is_searched_as_words() -> None:
    assert spaced_name("InventoryServiceDown") == "Inventory Service Down"
    assert spaced_name("HRPortalDown") == "HR Portal Down"
    assert spaced_name("CHECKOUT_SERVICE_CRASH") == "CHECKOUT_SERVICE_CRASH"
    assert spaced_name("payment.timeout") == "payment.timeout"
    incident = {"event": "KubePodCrashLooping", "message": "alert fired"}
    assert retrieval_query(incident) == "Kube Pod Crash Looping alert fired"
    assert spaced_name("InventoryService5xxRatioHigh") == "Inventory Service 5xx Ratio High"
    assert spaced_name("[RESOLVED] InventoryServiceDown") == "[RESOLVED] Inventory Service Down"
    assert spaced_name("PAY408") == "PAY408"  # a code, not a name
    # An alert's name as the whole message is searched as words too.
    assert retrieval_query({"message": "[FIRING:1] CheckoutErrors"}) == "[FIRING:1] Checkout Errors"
    assert retrieval_query({"message": "ZeroDivisionError in apply_discount"}) == (
        "ZeroDivisionError in apply_discount"
    )


def test_a_code_the_reporter_sets_aside_is_not_searched() -> None:
    message = "Last week's CH-502 (chiller monitor crash) is fixed. Today the HQ AC alarms."
    query = retrieval_query({"message": message})
    assert "CH-502" not in query and "chiller" not in query
    assert "HQ AC alarms" in query
    assert "PAY-408" in retrieval_query({"message": "could this be PAY-408 again?"})


def test_a_stack_trace_is_searched_without_library_frames_and_boilerplate() -> None:
    from app.rag.query import incident_query, telling_stack

    trace = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/app/venv/lib/python3.12/site-packages/urllib3/connection.py", line 198, '
            "in _new_conn",
            "    sock = connection.create_connection(",
            "ConnectionRefusedError: [Errno 111] Connection refused",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "/app/checkout_service.py", line 77, in reserve_stock',
            '    r = http.post(f"{INVENTORY_URL}/v1/reservations", json=basket.lines())',
            "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventory-api.intra')",
            "\tat org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:785)",
            "\t... 42 more",
        ]
    )
    assert telling_stack(trace).splitlines() == [
        "ConnectionRefusedError: [Errno 111] Connection refused",
        '  File "/app/checkout_service.py", line 77, in reserve_stock',
        '    r = http.post(f"{INVENTORY_URL}/v1/reservations", json=basket.lines())',
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='inventory-api.intra')",
    ]
    assert "site-packages" not in incident_query({"message": "checkout 500", "stack_trace": trace})
    # A trace of nothing but library frames is searched as it is.
    only = '  File "/usr/lib/python3.12/site-packages/x.py", line 1, in f'
    assert telling_stack(only) == only
