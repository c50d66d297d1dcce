"""Measures read as a dashboard writes them, codes typed loosely, and whose code ran.

Docs are the real knowledge base's entries in the ``rag`` node's state form (``helpers.docs``)
with similarities chosen per test, as in ``test_diagnosis``.
"""

from __future__ import annotations

from typing import Any

from tests.rca.helpers import by_code, diagnosed


def test_a_latency_well_inside_the_timeout_it_is_read_beside_is_no_failure(chunks: Any) -> None:
    pairs = [("PAY-408", 0.67), ("POS-502-CARD", 0.49)]
    quiet = {"message": "payments p95 0.3s, timeout 10s, error rate 0.1%", "service": "payments"}
    diagnosis = diagnosed(chunks, quiet, *pairs)
    assert diagnosis.abstained
    # The same service near its timeout is the timeout family's failure.
    slow = {**quiet, "message": "payments p95 9.8s against a 10s timeout, error rate 0.1%"}
    diagnosis = diagnosed(chunks, slow, *pairs)
    assert diagnosis.leading is not None and diagnosis.leading.key == "PAY-408"


def test_a_status_rate_beside_its_baseline_after_a_comma_is_quiet(chunks: Any) -> None:
    pairs = [("POS-502-CARD", 0.57), ("CH-502", 0.38)]
    usual = {"message": "card-gateway 502 rate 0.02%, baseline 0.03%", "service": "card-gateway"}
    diagnosis = diagnosed(chunks, usual, *pairs)
    assert diagnosis.abstained
    # A status rate far above it is the failure, whatever else the report counts zero.
    spike = {**usual, "message": "card-gateway auth 502 rate 31%, cash tenders 0 errors"}
    diagnosis = diagnosed(chunks, spike, *pairs)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-502-CARD"
    assert "502" in {h.signal for h in diagnosis.leading.confirmed}


def test_a_pool_and_its_503s_counted_zero_from_the_service_is_no_outage(chunks: Any) -> None:
    incident = {
        "message": "inventory pool 12/50 in use, 503 rate 0%, health green",
        "service": "inventory-api",
    }
    pairs = [("INV-503", 0.64), ("POS-503-PLU", 0.35)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    assert diagnosis.abstained


def test_a_zero_that_counts_nothing_does_not_say_all_is_well(chunks: Any) -> None:
    incident = {"message": "div by zero on web checkout"}
    pairs = [("CO-500", 0.55), ("POS-500-CHECKOUT", 0.45)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    assert diagnosis.leading is not None and diagnosis.leading.key == "CO-500"


def test_the_familys_code_typed_loosely_in_the_prose_is_a_hint(chunks: Any) -> None:
    incident = {"message": "co500 back on web shop checkout"}
    pairs = [("CO-500", 0.50), ("POS-500-CHECKOUT", 0.59)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    checkout = by_code(diagnosis.candidates)["CO-500"]
    assert [h.signal for h in checkout.hints] == ["co500"]
    assert diagnosis.leading is not None and diagnosis.leading.key == "CO-500"
    # Set aside, it hints at nothing.
    dismissed = {"message": "not co500 this time, web shop checkout slow"}
    diagnosis = diagnosed(chunks, dismissed, *pairs)
    assert not by_code(diagnosis.candidates)["CO-500"].hints


def test_a_stack_frames_source_folder_names_the_service_whose_code_ran(chunks: Any) -> None:
    incident = {
        "message": "payment step failing at the tills, 500s",
        "service": "payment-service",
        "stack_trace": "Traceback (most recent call last):\n"
        '  File "/app/pos_api/checkout_handler.py", line 98, in complete_sale\n'
        '    tender = payload["tender_type"]\n'
        "KeyError: 'tender_type'",
        "logs": [
            "INFO POST /pos/v1/checkout store=0207 till=03",
            "ERROR POST /pos/v1/checkout store=0207 till=03 -> 500 Internal Server Error",
        ],
    }
    pairs = [("POS-500-CHECKOUT", 0.73), ("POS-502-CARD", 0.59), ("PAY-408", 0.40)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-500-CHECKOUT"
    assert "incident:stack:2" in {
        i for h in diagnosis.leading.confirmed if h.kind == "service" for i in h.evidence_ids
    }


def test_a_field_codes_words_in_another_systems_failing_line_do_not_hold_it(
    chunks: Any,
) -> None:
    incident = {
        "error_code": "CH-502",
        "message": "CH-502: gateway errors on the store backend",
        "service": "noc",
        "logs": [
            "WARN gateway GET /inventory/v1/stock/SKU-88812 -> 503 Service Unavailable",
            "ERROR stock lookup failed: connect to inventory-api:8080 failed: Connection refused",
            "WARN inventory-service health check failing 3/3 targets",
            "INFO chiller-monitor temperature batch received from 212 stores",
        ],
    }
    pairs = [("CH-502", 0.54), ("INV-503", 0.73), ("POS-503-PLU", 0.64)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    assert diagnosis.overruled_code == "CH-502"
    assert diagnosis.leading is not None and diagnosis.leading.key == "INV-503"


def test_a_service_shown_working_while_another_familys_service_fails_is_not_it(
    chunks: Any,
) -> None:
    incident = {
        "message": "card terminals throwing 502 at store 0412?",
        "service": "store-support",
        "logs": [
            '{"level":"info","service":"pos-card-gateway","msg":"authorisation approved",'
            '"status":200,"dur_ms":611}',
            '"GET /api/chiller/v1/stores/0412/temps HTTP/1.1" 502 UC "store-dashboard/1.8"',
            '{"level":"info","service":"pos-card-gateway","msg":"authorisation approved",'
            '"status":200,"dur_ms":574}',
            "chiller-monitor-5f8c7d9b6-rr8hn    0/1     CrashLoopBackOff   6 (41s ago)   2h",
        ],
    }
    pairs = [("POS-502-CARD", 0.70), ("CH-502", 0.64)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    card = by_code(diagnosis.candidates)["POS-502-CARD"]
    assert any("chiller-monitor" in str(h.observed) for h in card.contradicted)
    assert diagnosis.leading is not None and diagnosis.leading.key == "CH-502"


def test_a_triage_bot_logging_the_tag_it_set_repeats_the_field(chunks: Any) -> None:
    incident = {
        "error_code": "POS-422-AMOUNT",
        "message": "ticket auto-tagged POS-422-AMOUNT by triage bot - tills rejecting refunds",
        "service": "pos-api",
        "logs": [
            '{"level":"info","service":"triage-bot","msg":"auto-tag applied",'
            '"tag":"POS-422-AMOUNT","confidence":0.41}',
            '{"level":"warn","service":"pos-api","msg":"POST /v1/sales","status":422,'
            '"body":{"field":"lines[0].quantity","detail":"quantity must be greater than 0"}}',
        ],
    }
    pairs = [("POS-422-AMOUNT", 0.65), ("POS-422-QTY", 0.69), ("POS-422-LINES", 0.62)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    assert diagnosis.overruled_code == "POS-422-AMOUNT"
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-422-QTY"


def test_a_known_services_alias_neighbours_the_family_its_first_name_does(
    chunks: Any,
) -> None:
    # "called by checkout": the checkout service's alias ``webshop-checkout`` is that caller.
    incident = {
        "message": "PAY408 again on web checkout: the psp takes 30s+ to answer, our client "
        "gives up after 10s and retries",
        "service": "webshop-checkout",
    }
    pairs = [("PAY-408", 0.66), ("CO-500", 0.36)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    payment = by_code(diagnosis.candidates)["PAY-408"]
    assert not any(h.kind == "service" for h in payment.contradicted)
    assert diagnosis.leading is not None and diagnosis.leading.key == "PAY-408"


def test_a_familys_word_only_in_a_count_at_its_baseline_is_no_record_of_it(
    chunks: Any,
) -> None:
    incident = {
        "message": "Till rejects board, last hour, for the store ops stand-up.",
        "service": "pos-api",
        "logs": [
            "pos-api 422 rejects by field: lines=4 (baseline 5), total=7 (baseline 8)",
            "pos-api 422 rejects by field: quantity=1,312 (baseline 6)",
        ],
    }
    pairs = [("POS-422-AMOUNT", 0.58), ("POS-422-LINES", 0.62), ("POS-422-QTY", 0.63)]
    diagnosis = diagnosed(chunks, incident, *pairs)
    amount = by_code(diagnosis.candidates)["POS-422-AMOUNT"]
    assert "total" not in {h.signal for h in amount.confirmed}
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-422-QTY"


def test_a_resolved_alert_rendered_with_bare_label_and_annotation_lines_is_over(
    chunks: Any,
) -> None:
    incident = {
        "event": "PaymentProviderLatencyHigh",
        "message": "[RESOLVED] PSP p95 latency near timeout, 504s rising",
        "service": "payment-service",
        "logs": [
            "status=resolved",
            "alertname=PaymentProviderLatencyHigh",
            "severity=critical",
            "summary: Payment provider latency above timeout budget",
            "endsAt=2024-06-03T12:41:30Z",
        ],
    }
    diagnosis = diagnosed(chunks, incident, ("PAY-408", 0.77))
    assert diagnosis.abstained


def test_a_firing_alert_someone_asks_about_is_still_the_live_record(chunks: Any) -> None:
    incident = {
        "event": "KubePodCrashLooping",
        "message": "Is this real or the planned restart? The announced restart was yesterday "
        "22:00.",
        "logs": [
            "alertname=KubePodCrashLooping",
            "namespace=store-iot",
            "container=chiller-monitor",
            "severity=critical",
            "description=Pod store-iot/chiller-monitor-7c4b9 is restarting 6.2 times / 10 minutes.",
        ],
    }
    diagnosis = diagnosed(chunks, incident, ("CH-502", 0.55))
    assert diagnosis.leading is not None and diagnosis.leading.key == "CH-502"
