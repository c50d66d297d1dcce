"""The entry points: an incident's parts ranked, signatures, empty and plain text."""

from __future__ import annotations

from tests.evidence.helpers import PY_DURING_HANDLING

from app.evidence.model import EvidenceFormat
from app.evidence.parse import parse_entries, parse_incident, parse_text
from app.evidence.patterns import normalise


def test_parse_incident_prefers_the_stack_trace_then_logs_then_message() -> None:
    incident = {
        "message": "service error",
        "stack_trace": PY_DURING_HANDLING,
        "logs": ["ERROR POST /checkout -> 500", "WARN cdn 404 for /img/x.jpg"],
    }
    parsed = parse_incident(incident)
    assert parsed.source == "stack_trace" and parsed.exception_type == "ZeroDivisionError"
    assert parsed.http_statuses == (500, 404)
    from_logs = parse_incident({"message": "errors in logs", "logs": incident["logs"]})
    assert from_logs.source == "logs" and from_logs.causal_line == "ERROR POST /checkout -> 500"
    from_message = parse_incident({"message": "ZeroDivisionError in discount: HTTP 500"})
    assert from_message.source == "message" and from_message.exception_type == "ZeroDivisionError"


def test_of_the_errors_the_one_naming_what_failed_is_causal() -> None:
    logs = [
        "07:37:59Z INFO  inventory-service GET /v1/stock/1 200",
        "07:37:59Z ERROR search-api query parse error q='\"\"' -> 400",
        "07:38:46Z ERROR checkout-service unhandled exception in POST /checkout: "
        "ZeroDivisionError: division by zero (checkout_service.py:142 in apply_discount)",
        "07:38:46Z ERROR checkout-service POST /checkout 500 58ms",
    ]
    parsed = parse_entries(logs)
    assert parsed.exception_type == "ZeroDivisionError"
    assert "checkout_service.py" in (parsed.causal_line or "")
    # A server error leads a client error; the first of equals still leads.
    statuses = parse_entries([logs[1], logs[3]])
    assert statuses.causal_line == logs[3]
    assert parse_entries([logs[1]]).causal_line == logs[1]


def test_signature_groups_repeats_and_separates_different_errors() -> None:
    first = parse_entries(
        [
            "2024-06-02T10:41:17Z ERROR order 771204 req 5b1e0c3a-9d4f-4c1e-8a52-1f0e9b7c2d11 "
            "from 10.1.3.9:51022 txn=8f2a1c9e failed: PAY-408 after 30000ms -> 504"
        ]
    )
    again = parse_entries(
        [
            "2024-06-03T08:00:02Z ERROR order 990001 req 0c7a11be-0000-4c1e-8a52-aaaaaaaaaaaa "
            "from 10.9.0.4:40118 txn=77bb00ff failed: PAY-408 after 15000ms -> 504"
        ]
    )
    other = parse_entries(["2024-06-02T10:41:17Z ERROR order 771204 failed: INV-503 -> 503"])
    assert first.signature == again.signature
    assert first.signature != other.signature
    assert "PAY-408" in first.signature and "771204" not in first.signature
    assert normalise("at 2024-06-02 10:41:17.123 from 10.1.3.9 id 0xdeadbeef n=42") == (
        "at <ts> from <ip> id <hex> n=<n>"
    )


def test_python_signature_ignores_line_numbers_but_keeps_the_function() -> None:
    moved = PY_DURING_HANDLING.replace("line 88", "line 97")
    assert parse_text(PY_DURING_HANDLING).signature == parse_text(moved).signature
    assert "apply_discount" in parse_text(PY_DURING_HANDLING).signature


def test_empty_and_plain_text() -> None:
    assert parse_text("") == parse_text("   \n ")
    assert parse_text("").format is EvidenceFormat.EMPTY
    plain = parse_text("the till is slow today")
    assert plain.format is EvidenceFormat.TEXT and plain.exception_type is None
