"""Whose records they are: threads, the larger system, another system's words, drills.

Docs are the real knowledge base's entries in the ``rag`` node's state form (``helpers.docs``)
with similarities chosen per test, as in ``test_diagnosis``.
"""

from __future__ import annotations

from typing import Any

from tests.rca.helpers import by_code, docs, marked_larger_system

from app.rca.diagnosis import NOT_LIVE, diagnose


def test_a_java_thread_in_brackets_is_no_other_system(chunks: Any) -> None:
    incident = {
        "message": "tills reporting 'sale rejected' in some stores",
        "service": "pos-api-78d9c6b5f-x4j8m",
        "logs": [
            "16:12:40.118  INFO 7 --- [io-8443-exec-11] c.a.pos.api.HealthEndpoint : "
            "GET /actuator/health -> 200",
            "16:12:42.779  WARN 7 --- [io-8443-exec-5] c.a.pos.api.ValidationAdvice : "
            "422 UNPROCESSABLE_ENTITY store=0622 violations=[lines[2].plu is required]",
            "Normal Pulled pod/pos-api-78d9c6b5f-x4j8m Container image already present",
        ],
    }
    pairs = [("POS-422-QTY", 0.64), ("POS-422-LINES", 0.68), ("POS-422-AMOUNT", 0.57)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-422-LINES"
    assert not diagnosis.leading.contradicted


def test_the_larger_system_the_retrieval_marks_names_no_failing_service(chunks: Any) -> None:
    incident = {
        "service": "web-shop",
        "message": 'product pages show "stock unknown"; the stock widget calls get 503 Service '
        'Unavailable and the inventory logs are full of "QueuePool limit of size 10 overflow '
        '5 reached"',
    }
    retrieved = docs(chunks, ("INV-503", 0.58), ("POS-503-PLU", 0.45))
    # The checkout family that ``web-shop`` starts the name of was not retrieved: without the
    # retrieval's mark the shop reads as an unknown service that contradicts every family.
    unmarked = diagnose(incident, retrieved, retrieval_low_confidence=False)
    assert unmarked.abstained
    marked = diagnose(incident, marked_larger_system(retrieved), retrieval_low_confidence=False)
    assert marked.leading is not None and marked.leading.key == "INV-503"
    assert not marked.abstained


def test_the_familys_phrase_only_in_another_systems_record_is_that_systems(chunks: Any) -> None:
    incident = {
        "service": "store-support",
        "message": "Store 503 (Leeds): back-office label printer offline, connection refused",
        "logs": [
            "06:45:10 WARN print-spooler-store503 job 88121 to 10.53.0.41:5022 failed: "
            "connection refused",
            "06:46:00 INFO pos-api-5d6c7b8f4-k7v2n store=0503 sales normal",
        ],
    }
    diagnosis = diagnose(incident, docs(chunks, ("INV-503", 0.5)), retrieval_low_confidence=False)
    assert diagnosis.abstained
    inventory = by_code(diagnosis.candidates)["INV-503"]
    assert [h.observed for h in inventory.contradicted] == ["print-spooler-store503"]
    # The inventory host refusing is the family's own failure.
    own = {
        **incident,
        "logs": ["06:45:10 ERROR pos-api GET inventory-service:8080 failed: connection refused"],
    }
    kept = diagnose(own, docs(chunks, ("INV-503", 0.5)), retrieval_low_confidence=False)
    assert kept.leading is not None and kept.leading.key == "INV-503"


def test_a_game_day_the_records_announce_and_end_is_no_live_failure(chunks: Any) -> None:
    logs = [
        "10:00:00 slack #gameday @sre: Game day started. Scenario 3: kill 2/3 inventory-service "
        "pods for 5 min. Expect 503s on stock lookups. Do not page.",
        '10:00:09 envoy "GET /v1/stock/SKU-2231 HTTP/1.1" 503 UH no_healthy_upstream '
        '"inventory-service:8080"',
        "10:00:10 webshop-frontend-5a6b7c8d9-ee3ff WARN stock lookup failed status=503",
        "10:06:10 inventory-service-7f8a9b0c1-gg5hh INFO GET /health 200",
        "10:06:12 webshop-frontend-5a6b7c8d9-ee3ff INFO GET /product/SKU-2231 200",
    ]
    incident = {
        "service": "inventory-service",
        "message": "seeing inventory 503s in the channel - is this the gameday?",
        "logs": logs,
    }
    pairs = [("INV-503", 0.66), ("POS-503-PLU", 0.59)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE
    # Without the records showing it over, the same report is live.
    live = {**incident, "logs": logs[:3]}
    answered = diagnose(live, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert answered.leading is not None and answered.leading.key == "INV-503"


def test_a_provider_incident_said_resolved_whose_timeout_was_retried_is_over(
    chunks: Any,
) -> None:
    incident = {
        "service": "payment-service",
        "message": "payment provider incident resolved per their status page, just "
        "sanity-checking before I close the ticket",
        "logs": [
            "14:02:11 payment-service-6c7d8e9f0-mm2nn WARN psp.authorise ReadTimeout "
            "(attempt 1/3) order=ord_70021",
            "14:02:12 payment-service-6c7d8e9f0-mm2nn INFO psp.authorise ok (attempt 2/3) "
            "order=ord_70021",
            "14:40:09 payment-service-6c7d8e9f0-mm2nn INFO psp.authorise ok order=ord_70412",
        ],
    }
    diagnosis = diagnose(incident, docs(chunks, ("PAY-408", 0.7)), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE


def test_a_service_typed_with_a_typo_or_a_release_is_the_familys(chunks: Any) -> None:
    for service, message, code in (
        ("chiler-monitor", "502 frm chiler endpoints", "CH-502"),
        ("till-api-v2", "sale rejected qty", "POS-422-QTY"),
        ("payments-v3", "timeouts", "PAY-408"),
    ):
        pairs = [(code, 0.48), ("POS-502-CARD", 0.3)]
        incident = {"message": message, "service": service}
        diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
        assert diagnosis.leading is not None and diagnosis.leading.key == code, service
        assert not diagnosis.leading.contradicted, service


def test_a_timeout_waiting_for_a_pooled_connection_is_no_read_timeout(chunks: Any) -> None:
    incident = {
        "service": "checkout",
        "message": "checkout down, pool exhausted",
        "stack_trace": "Traceback (most recent call last):\n"
        '  File "/app/orders_repo.py", line 33, in create_order\n'
        "    session.flush()\n"
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 5 overflow 10 reached, "
        "connection timed out, timeout 30.00",
    }
    pairs = [("PAY-408", 0.41), ("CO-500", 0.52)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained
    payment = by_code(diagnosis.candidates)["PAY-408"]
    assert "exception" in {h.kind for h in payment.contradicted}


def test_what_a_validation_error_echoes_of_the_request_is_not_what_failed(chunks: Any) -> None:
    incident = {
        "service": "pos",
        "message": "sales rejected with 422 at the tills",
        "stack_trace": "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
        "SaleRequest\nlines.1.plu\n  Field required [type=missing, input_value={'qty': 1, "
        "'amount': '2.49'}, input_type=dict]",
    }
    pairs = [("POS-422-QTY", 0.7), ("POS-422-LINES", 0.67), ("POS-422-AMOUNT", 0.65)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-422-LINES"


def test_a_dependency_the_familys_doc_names_is_the_familys_own(chunks: Any) -> None:
    incident = {
        "service": "card-gateway",
        "message": "see trace, store 0142",
        "stack_trace": "System.Net.Http.HttpRequestException: Response status code does not "
        "indicate success: 502 (Bad Gateway).",
        "logs": [
            "warn: Acme.Pos.CardGateway.Acquirer.AcquirerClient[0] acquirer "
            "https://auth.acquirer-eu.example/v1/authorisations returned 502 Bad Gateway: "
            "invalid response from upstream"
        ],
    }
    pairs = [("POS-502-CARD", 0.56), ("PAY-408", 0.41)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-502-CARD"
    assert not diagnosis.leading.contradicted


def test_a_test_alerts_own_labels_are_the_alert_not_a_failure(chunks: Any) -> None:
    incident = {
        "event": "PosCheckoutErrorsHigh",
        "service": "pos-api",
        "message": "[TEST] Synthetic alert to verify routing to #pos-oncall, no action needed",
        "logs": [
            "labels: alertname=PosCheckoutErrorsHigh, service=pos-api, severity=critical",
            "annotations: description=checkout errors above 5% on the tills",
            "status=firing",
        ],
    }
    pairs = [("POS-500-CHECKOUT", 0.47), ("POS-502-CARD", 0.43)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE
    # A real record of the failure beside the same labels is live.
    live = {**incident, "logs": [*incident["logs"], "ERROR pos-api POST /till/checkout -> 500"]}
    answered = diagnose(live, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert not answered.abstained


def test_a_reposted_trace_under_a_report_that_ends_the_incident_is_history(chunks: Any) -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "checkout_service.py", line 88, in apply_discount\n'
        "    per_item = discount / item_count\n"
        "ZeroDivisionError: division by zero"
    )
    incident = {
        "service": "web-shop",
        "message": "FYI the ZeroDivisionError traceback people keep reposting is from the March "
        "incident, already patched. Prod checkout has had zero 500s since.",
        "stack_trace": trace,
    }
    pairs = [("CO-500", 0.83), ("POS-500-CHECKOUT", 0.64)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE
    live = {**incident, "message": "checkout 500s, trace below"}
    answered = diagnose(live, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert answered.leading is not None and answered.leading.key == "CO-500"


def test_metrics_showing_the_service_up_and_its_5xx_at_zero_are_no_outage(chunks: Any) -> None:
    incident = {
        "service": "inventory-service",
        "message": "CPU on inventory-service at 93% since the nightly reindex started at 01:00.",
        "logs": [
            'rate(container_cpu_usage_seconds_total{container="inventory-service"}[5m]) => 0.93',
            'sum(rate(http_requests_total{service="inventory-service",code="503"}[5m])) => 0',
            'up{job="inventory-service"} => 6/6',
        ],
    }
    pairs = [("INV-503", 0.63), ("POS-503-PLU", 0.46)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained


def test_a_load_test_line_from_staging_is_no_production_failure(chunks: Any) -> None:
    incident = {
        "service": "inventory-service",
        "message": "k6 load test in staging (planned, ticket LT-88), results.",
        "logs": [
            'db_pool_in_use{service="inventory-service",env="staging"} => 40/40 at peak',
            "staging 503 ratio => 6.2% at peak, 0% after ramp-down",
            "production inventory-service 503 => 0; pool 10/40",
        ],
    }
    diagnosis = diagnose(incident, docs(chunks, ("INV-503", 0.48)), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE


def test_a_fault_in_another_capabilitys_endpoint_is_not_the_familys(chunks: Any) -> None:
    incident = {
        "service": "pos-api",
        "message": "POS API 500 at store 0412 this evening",
        "logs": [
            "21:05:10 ERROR POST /pos/v1/stores/0412/reports/end-of-day 500 Internal Server Error",
            "21:05:10 ERROR KeyError: 'z_report_seq' in pos_api/reports/eod.py line 77",
            "21:04:58 INFO POST /pos/v1/stores/0412/tills/03/checkout 201",
        ],
    }
    pairs = [("POS-500-CHECKOUT", 0.6), ("POS-503-PLU", 0.47)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    # Neither the till checkout's family (the failing request went to the end-of-day report)
    # nor the PLU family its caller's name alone ties in.
    assert diagnosis.abstained
    checkout = by_code(diagnosis.candidates)["POS-500-CHECKOUT"]
    assert any("report" in h.why for h in checkout.contradicted)
    # A caller's breaker refusing calls to its callee is no fault of the caller's own.
    breaker = {
        "service": "pos-api",
        "message": "scans not pricing",
        "logs": [
            "WARN  io.github.resilience4j.circuitbreaker.CallNotPermittedException: "
            "CircuitBreaker 'plu' is OPEN and does not permit further calls"
        ],
    }
    plu = diagnose(
        breaker,
        docs(chunks, ("POS-503-PLU", 0.6), ("POS-422-QTY", 0.43)),
        retrieval_low_confidence=False,
    )
    assert plu.leading is not None and plu.leading.key == "POS-503-PLU"


def test_covered_services_shown_working_beside_another_systems_502(chunks: Any) -> None:
    incident = {
        "message": "502 Bad Gateway from the store gateway at store 0233",
        "logs": [
            "[error] connect() failed (111: Connection refused) while connecting to upstream, "
            'request: "GET /api/v1/energy/meters HTTP/1.1", upstream: '
            '"http://energy-meter-api:9100/api/v1/energy/meters"',
            "chiller-monitor /health 200, temperature readings current for store 0233",
            "pos-card-gateway store 0233: 0 failed authorisations in 1h",
        ],
    }
    pairs = [("CH-502", 0.71), ("POS-502-CARD", 0.72)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained


def test_a_partners_422_with_the_familys_words_beside_pos_api_at_baseline(chunks: Any) -> None:
    incident = {
        "message": "422: total does not equal sum of lines",
        "logs": [
            "marketplace-connector POST https://seller-api.marketplace.example/v1/orders/ack -> "
            '422 {"error":"total 19.99 does not equal sum of lines 20.00"}',
            "pos-api 422 rate last 1h: 0.02% (baseline)",
        ],
    }
    pairs = [("POS-422-AMOUNT", 0.77), ("POS-422-LINES", 0.7)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained


def test_the_familys_phrase_only_in_another_familys_service_record_is_that_service(
    chunks: Any,
) -> None:
    incident = {
        "service": "noc",
        "message": "lots of errors at the tills since 06:00",
        "logs": [
            "4m Warning Unhealthy pod/plu-service-5c9d8b-t7kq2 Readiness probe failed: Get "
            '"http://10.4.1.9:8080/ready": dial tcp 10.4.1.9:8080: connect: connection refused',
            '{"svc":"pos-api","route":"GET /v2/prices/4011","status":503,"ms":2}',
        ],
    }
    pairs = [("INV-503", 0.52), ("POS-503-PLU", 0.51)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-503-PLU"
    inventory = by_code(diagnosis.candidates)["INV-503"]
    assert [h.observed for h in inventory.contradicted] == ["plu-service"]
    # "plu" alone is a sale line's field, not the PLU service: the lines family keeps its words.
    lines = {
        "service": "pos-api",
        "message": "sales rejected at store 0033",
        "logs": ["POST /pos/v1/sales -> 422: lines must not be empty (plu-service not called)"],
    }
    kept = diagnose(lines, docs(chunks, ("POS-422-LINES", 0.6)), retrieval_low_confidence=False)
    assert kept.leading is not None and kept.leading.key == "POS-422-LINES"


def test_a_resolved_alert_rendered_with_dotted_annotations_is_no_live_failure(
    chunks: Any,
) -> None:
    incident = {
        "event": "HighErrorRate",
        "service": "plu-service",
        "message": "[RESOLVED] HighErrorRate plu-service (critical)",
        "logs": [
            "labels.alertname: HighErrorRate",
            "annotations.summary: 503 share on price lookups above 5%",
            "status=resolved endsAt=2024-05-14T10:42:00Z",
        ],
    }
    diagnosis = diagnose(
        incident, docs(chunks, ("POS-503-PLU", 0.69)), retrieval_low_confidence=False
    )
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE


def test_what_is_well_since_a_time_is_not_what_fails_now(chunks: Any) -> None:
    for message in (
        "RESOLVED: card payments work again, the 502 rate has been at baseline since 16:40.",
        "Update: the card gateway outage is resolved since 08:30, tills take cards. Separate "
        "thing, not urgent: the HR portal is slow to log in this morning.",
    ):
        incident = {"service": "pos-card-gateway", "message": message}
        diagnosis = diagnose(
            incident, docs(chunks, ("POS-502-CARD", 0.79)), retrieval_low_confidence=False
        )
        assert diagnosis.abstained and diagnosis.reason == NOT_LIVE, message
    live = {"service": "pos-card-gateway", "message": "card payments failing with 502 since 16:40"}
    answered = diagnose(live, docs(chunks, ("POS-502-CARD", 0.79)), retrieval_low_confidence=False)
    assert answered.leading is not None and answered.leading.key == "POS-502-CARD"


def test_asking_whether_a_usual_rate_is_normal_is_no_incident(chunks: Any) -> None:
    incident = {
        "service": "pos-api",
        "message": 'Is this normal? sum(rate(http_requests_total{service="pos-api",'
        'status=~"5.."}[5m])) = 0.002, same as every Monday. Just checking.',
    }
    pairs = [("POS-422-AMOUNT", 0.44), ("POS-500-CHECKOUT", 0.34)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE


def test_a_series_name_says_nothing_of_the_familys_words(chunks: Any) -> None:
    incident = {
        "service": "pos-api",
        "message": 'sum(rate(http_requests_total{service="pos-api",status="422"}[5m])) = 3.2',
        "logs": [
            'sum by (handler)(rate(http_requests_total{status="422"}[5m])): /v1/sales 3.2',
            'sample 422 body: {"field":"lines[1].quantity","detail":"must be at most 999"}',
        ],
    }
    pairs = [("POS-422-AMOUNT", 0.58), ("POS-422-QTY", 0.54)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-422-QTY"
    amount = by_code(diagnosis.candidates)["POS-422-AMOUNT"]
    assert "total" not in {h.signal for h in amount.confirmed}


def test_a_pasted_command_is_what_was_asked_and_its_output_is_that_systems(chunks: Any) -> None:
    incident = {
        "service": "web-shop",
        "message": "inventory 503 on product pages",
        "logs": [
            "$ curl -s -w '%{http_code}' http://inventory-service:8080/stock/sku-44120",
            "200",
            "$ curl -v http://recommendation-service:8080/also-bought/sku-44120",
            "< HTTP/1.1 503 Service Unavailable",
        ],
    }
    retrieved = marked_larger_system(docs(chunks, ("INV-503", 0.63), ("POS-503-PLU", 0.55)))
    diagnosis = diagnose(incident, retrieved, retrieval_low_confidence=False)
    inventory = by_code(diagnosis.candidates)["INV-503"]
    assert [h.observed for h in inventory.contradicted] == ["recommendation-service"]
    assert diagnosis.leading is None or diagnosis.leading.key != "INV-503"
    # The statuses a query names are what was asked; a zero result is no failure.
    asked = {
        "service": "pos-card-gateway",
        "message": "card payments down at store 0517?",
        "logs": [
            "$ promtool query instant http://prometheus:9090 "
            "'sum(rate(card_authorisations_total{status=\"502\"}[15m]))'",
            'sum(rate(card_authorisations_total{status="502"}[15m])) => 0',
        ],
    }
    quiet = diagnose(asked, docs(chunks, ("POS-502-CARD", 0.66)), retrieval_low_confidence=False)
    card = by_code(quiet.candidates)["POS-502-CARD"]
    assert not [h for h in card.confirmed if h.kind == "status" and not h.weak]


def test_a_command_that_asks_the_familys_own_system_keeps_its_output(chunks: Any) -> None:
    incident = {
        "service": "pos-payments",
        "message": "card sales failing at the tills",
        "logs": [
            "$ curl -v -X POST https://card-gateway.stores.internal/v1/authorise "
            "-d @auth-test.json",
            "< HTTP/1.1 502 Bad Gateway",
            '{"error":"bad gateway","detail":"invalid response from upstream acquirer"}',
        ],
    }
    diagnosis = diagnose(
        incident, docs(chunks, ("POS-502-CARD", 0.72)), retrieval_low_confidence=False
    )
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-502-CARD"
    assert not diagnosis.leading.contradicted


def test_a_bots_code_over_records_of_another_system_only_is_overruled(chunks: Any) -> None:
    incident = {
        "error_code": "POS-502-CARD",
        "service": "service-desk",
        "message": "ticket auto-tagged POS-502-CARD by the triage bot: 502 Bad Gateway reported",
        "logs": [
            "[error] upstream prematurely closed connection while reading response header from "
            'upstream, server: hr.corp.internal, upstream: "http://payroll-api:8000/payslips"',
            "payroll-api:1.9 Restarting (1) 3 seconds ago",
        ],
    }
    pairs = [("POS-502-CARD", 0.69), ("CH-502", 0.49)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.abstained
    card = by_code(diagnosis.candidates)["POS-502-CARD"]
    assert any("payroll-api" in str(h.observed) for h in card.contradicted)


def test_a_monitoring_tools_own_backend_down_is_no_familys_failure(chunks: Any) -> None:
    incident = {
        "service": "noc",
        "message": "dashboards unreachable, HAProxy says no server available",
        "logs": [
            "lb-02 haproxy[1402]: Server grafana_backend/grafana-1 is DOWN, reason: Layer4 "
            'connection problem, info: "Connection refused"',
            "HTTP/1.1 503 Service Unavailable",
        ],
    }
    pairs = [("INV-503", 0.5), ("POS-503-PLU", 0.41)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    inventory = by_code(diagnosis.candidates)["INV-503"]
    assert inventory.contradicted
    assert diagnosis.leading is None or diagnosis.leading.key != "INV-503"


def test_the_earlier_mail_a_reply_quotes_is_not_the_report(chunks: Any) -> None:
    incident = {
        "service": "store-support",
        "message": "Tills beep when we scan but no price comes up: 'Price lookup unavailable "
        "(503)'. Stock on the handhelds is fine, so not the stock system like last month.\n\n"
        "> On Fri, 11 Apr 2025 at 09:15, IT Service Desk wrote:\n"
        "> the stock lookup outage (inventory service 503, connection pool exhausted) is "
        "resolved.",
    }
    pairs = [("POS-503-PLU", 0.67), ("INV-503", 0.53)]
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "POS-503-PLU"
    inventory = by_code(diagnosis.candidates)["INV-503"]
    assert "connection pool exhausted" not in {h.signal for h in inventory.confirmed}


def test_a_timeline_that_ends_the_incident_leaves_what_happened_before_history(
    chunks: Any,
) -> None:
    export = (
        "#inc-card-502 export\n"
        "11:02 ana: card auths at tills returning 502 since 10:40, cash OK\n"
        "11:20 ana: acquirer confirmed an outage on their side\n"
        "11:51 ana: all clear. Closing the incident, postmortem Thursday.\n"
        "11:52 ben: store 9 taking cards normally"
    )
    incident = {"service": "pos-card-gateway", "message": export}
    diagnosis = diagnose(
        incident, docs(chunks, ("POS-502-CARD", 0.64)), retrieval_low_confidence=False
    )
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE
    # A handover whose open item is still failing is live.
    handover = {
        "service": "web-shop",
        "message": "Night handover\n1) PLU 503 at store 112 - resolved 03:10. No action.\n"
        "2) STILL OPEN: /checkout returns 500 for 'buy 0 get 1' baskets, ZeroDivisionError in "
        "checkout_service.py calculate_discount. No fix yet.",
    }
    pairs = [("CO-500", 0.72), ("POS-503-PLU", 0.53)]
    answered = diagnose(handover, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert answered.leading is not None and answered.leading.key == "CO-500"


def test_a_stack_frames_line_number_shows_no_service_working(chunks: Any) -> None:
    incident = {
        "service": "web-shop",
        "message": "price-match promo went live and web shop checkout throws 500 on some baskets",
        "logs": ["POST /checkout 500 basket=9912 promo=pricematch-0"],
        "stack_trace": "Traceback (most recent call last):\n"
        '  File "/app/checkout_service.py", line 212, in checkout\n'
        "    total = apply_discount(basket, promo)\n"
        '  File "/app/checkout_service.py", line 88, in apply_discount\n'
        "    per_item = promo.amount / promo.divisor\n"
        "ZeroDivisionError: division by zero",
    }
    retrieved = marked_larger_system(docs(chunks, ("CO-500", 0.8), ("POS-500-CHECKOUT", 0.61)))
    diagnosis = diagnose(incident, retrieved, retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "CO-500"
    assert not diagnosis.leading.contradicted


def test_a_record_from_a_named_staging_lab_is_no_production_failure(chunks: Any) -> None:
    incident = {
        "service": "noc",
        "message": "Game day 14:00-15:00: we block the card gateway's route to the acquirer in "
        "the staging lab and expect 502s. No action needed.",
        "logs": [
            "pos-card-gateway[staging-lab] ERROR 502 Bad Gateway: invalid response from upstream"
        ],
    }
    diagnosis = diagnose(
        incident, docs(chunks, ("POS-502-CARD", 0.72)), retrieval_low_confidence=False
    )
    assert diagnosis.abstained and diagnosis.reason == NOT_LIVE


def test_a_handovers_open_item_is_the_incident_and_its_closed_items_history(
    chunks: Any,
) -> None:
    handover = (
        "Handover night -> early\n"
        "* PLU 503 store 112 - resolved 03:10 (catalogue refresh).\n"
        "* POS-422-AMOUNT store 9 till 4 - no action, cashier keyed a price override wrong.\n"
        "* OPEN: web orders hang ~30s then fail; checkout sees 504 from payment-service, "
        "payment-client logs are full of ReadTimeout.\n"
        "- Pia"
    )
    pairs = [("POS-422-AMOUNT", 0.52), ("PAY-408", 0.66), ("POS-503-PLU", 0.5)]
    incident = {"service": "checkout", "message": handover}
    diagnosis = diagnose(incident, docs(chunks, *pairs), retrieval_low_confidence=False)
    assert diagnosis.leading is not None and diagnosis.leading.key == "PAY-408"
    # Live in a system no doc covers: the closed items name no family.
    elsewhere = {
        "service": "noc",
        "message": "Handover late -> night\n"
        "1. Chiller 502s stores 10-14 - resolved 17:45, chiller-monitor restarted.\n"
        "2. LIVE: order confirmation e-mails delayed ~2h, the SMTP relay gets timeouts from "
        "the mail provider.",
    }
    pairs = [("CH-502", 0.57), ("PAY-408", 0.46)]
    quiet = diagnose(elsewhere, docs(chunks, *pairs), retrieval_low_confidence=False)
    chiller = by_code(quiet.candidates)["CH-502"]
    assert not [h for h in chiller.confirmed if "incident:message" in h.evidence_ids]
