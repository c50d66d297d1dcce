"""The raw evidence parser: tracebacks, JVM traces, JSON and plain logs, noise, signatures."""

from __future__ import annotations

import json

import pytest

from app.graph.nodes.rag import retrieval_query
from app.intake.parser import (
    EvidenceFormat,
    Frame,
    Level,
    enriched_incident_query,
    enriched_query,
    find_error_codes,
    find_http_statuses,
    normalise,
    parse_entries,
    parse_incident,
    parse_stack_trace,
    parse_text,
)

PY_CHAINED_CAUSE = """\
Traceback (most recent call last):
  File "/srv/checkout/app/payments/client.py", line 57, in authorize
    resp = self.session.post(url, json=body, timeout=(3, 10))
  File "/srv/checkout/.venv/lib/python3.11/site-packages/requests/sessions.py", line 637, in post
    return self.request("POST", url, data=data, json=json, **kwargs)
  File "/usr/lib/python3.11/socket.py", line 706, in readinto
    return self._sock.recv_into(b)
TimeoutError: timed out

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/checkout/app/checkout.py", line 120, in pay
    return client.authorize(order)
  File "/srv/checkout/app/payments/client.py", line 61, in authorize
    raise PaymentProviderTimeout(f"provider did not answer for order {order.id}") from exc
payments.client.PaymentProviderTimeout: provider did not answer for order 771204
"""

PY_DURING_HANDLING = """\
Traceback (most recent call last):
  File "/app/checkout_service.py", line 88, in apply_discount
    per_item = promo.amount / basket.item_count
ZeroDivisionError: division by zero

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/checkout_service.py", line 212, in checkout
    total = apply_discount(basket, promo)
  File "/app/checkout_service.py", line 91, in apply_discount
    log.error("discount failed for %s", basket.id)
AttributeError: 'Basket' object has no attribute 'id'
"""

PY_LIBRARY_ONLY_ROOT = """\
Traceback (most recent call last):
  File "/app/.venv/lib/python3.11/site-packages/sqlalchemy/pool/impl.py", line 168, in _do_get
    raise exc.TimeoutError(
sqlalchemy.exc.TimeoutError: QueuePool limit of size 20 overflow 10 reached, timeout 30.00

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/inventory/repository.py", line 23, in stock_for
    with self.engine.connect() as conn:
inventory.errors.StockUnavailable: stock lookup failed
"""

JAVA_CAUSED_BY = """\
Exception in thread "http-nio-8080-exec-7" com.retail.pos.sale.SaleException: sale failed
\tat com.retail.pos.sale.SaleController.submit(SaleController.java:88)
\tat org.springframework.web.servlet.FrameworkServlet.doPost(FrameworkServlet.java:914)
Caused by: com.retail.pos.pricing.PluLookupException: price service returned 503 for plu=4011
\tat com.retail.pos.pricing.PluClient.priceFor(PluClient.java:91)
\tat com.retail.pos.sale.LineBuilder.addScannedItem(LineBuilder.java:37)
\t... 12 more
Caused by: java.net.SocketTimeoutException: Read timed out
\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)
\tat java.base/java.net.Socket$SocketInputStream.read(Socket.java:976)
\tat okhttp3.internal.http1.Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.kt:186)
\tat com.retail.pos.pricing.PluHttp.get(PluHttp.java:40)
\t... 14 more
"""

JAVA_SUPPRESSED = """\
java.lang.IllegalStateException: checkout failed
\tat com.retail.pos.checkout.CheckoutHandler.complete(CheckoutHandler.java:144)
\tSuppressed: java.io.IOException: close failed
\t\tat com.retail.pos.io.Receipt.close(Receipt.java:12)
\t\tCaused by: java.lang.Error: printer gone
\t\t\tat com.retail.pos.io.Printer.flush(Printer.java:5)
"""


def test_python_chain_direct_cause_picks_the_first_exception_and_deepest_app_frame() -> None:
    parsed = parse_text(PY_CHAINED_CAUSE)
    assert parsed.format is EvidenceFormat.PYTHON_TRACEBACK
    assert parsed.exception_type == "TimeoutError"
    assert parsed.exception_message == "timed out"
    # requests (site-packages) and socket (stdlib) are skipped.
    assert parsed.frame == Frame("/srv/checkout/app/payments/client.py", 57, "authorize")
    assert str(parsed.frame) == "/srv/checkout/app/payments/client.py:57:authorize"
    assert parsed.causal_line == "TimeoutError: timed out"
    assert parsed.level is Level.ERROR


def test_python_chain_during_handling_picks_the_original_exception() -> None:
    parsed = parse_text(PY_DURING_HANDLING)
    assert parsed.exception_type == "ZeroDivisionError"
    assert parsed.frame == Frame("/app/checkout_service.py", 88, "apply_discount")


def test_python_root_without_app_frames_falls_back_to_the_handler_frame() -> None:
    parsed = parse_text(PY_LIBRARY_ONLY_ROOT)
    assert parsed.exception_type == "sqlalchemy.exc.TimeoutError"
    assert parsed.frame == Frame("/app/inventory/repository.py", 23, "stock_for")


def test_bare_exception_with_multi_line_message() -> None:
    text = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for SaleLine\n"
        "quantity\n"
        "  Input should be greater than 0 [type=greater_than, input_value=0]\n"
        "-> pos-api responded 422 to POST /pos/v1/sales"
    )
    parsed = parse_stack_trace(text)
    assert parsed.exception_type == "pydantic_core._pydantic_core.ValidationError"
    assert parsed.exception_message is not None
    assert "quantity" in parsed.exception_message
    assert "greater than 0" in parsed.exception_message
    assert parsed.http_statuses == (422,)


def test_java_root_cause_is_the_last_caused_by_and_frame_skips_the_jdk() -> None:
    parsed = parse_text(JAVA_CAUSED_BY)
    assert parsed.format is EvidenceFormat.JAVA_STACK_TRACE
    assert parsed.exception_type == "java.net.SocketTimeoutException"
    assert parsed.exception_message == "Read timed out"
    assert parsed.frame == Frame("PluHttp.java", 40, "com.retail.pos.pricing.PluHttp.get")
    assert 503 in parsed.http_statuses


def test_java_root_with_only_jdk_frames_falls_back_to_the_enclosing_app_frame() -> None:
    text = (
        "feign.RetryableException: Connection refused executing GET http://inventory-svc/v1\n"
        "    at feign.FeignException.errorExecuting(FeignException.java:268)\n"
        "    at com.shop.catalog.clients.InventoryClient.stockFor(Unknown Source)\n"
        "Caused by: java.net.ConnectException: Connection refused\n"
        "    at java.base/sun.nio.ch.Net.pollConnect(Native Method)\n"
    )
    parsed = parse_text(text)
    assert parsed.exception_type == "java.net.ConnectException"
    assert parsed.frame == Frame(
        "Unknown Source", None, "com.shop.catalog.clients.InventoryClient.stockFor"
    )


def test_java_suppressed_exceptions_are_not_the_cause() -> None:
    parsed = parse_text(JAVA_SUPPRESSED)
    assert parsed.exception_type == "java.lang.IllegalStateException"
    assert parsed.frame is not None and parsed.frame.function.endswith("CheckoutHandler.complete")


def test_noisy_log_picks_the_first_error_carrying_evidence() -> None:
    lines = [
        "2024-06-02 10:41:15 INFO  sitemap regenerated",
        "2024-06-02 10:41:16 WARN  jvm GC pause 420ms (G1 Young) status=503",
        "2024-06-02 10:41:16 ERROR product-page rendering slow",
        "2024-06-02 10:41:17 ERROR plu-service health check failed: HTTP 503 (POS-503-PLU)",
        "2024-06-02 10:41:18 ERROR POST /checkout -> 500 ZeroDivisionError",
        "2024-06-02 10:41:19 WARN  cdn 404 for /img/sku/123.jpg",
    ]
    parsed = parse_entries(lines)
    assert parsed.causal_line == lines[3]
    assert parsed.error_codes == ("POS-503-PLU",)
    assert parsed.http_statuses[0] == 503 and set(parsed.http_statuses) == {503, 500, 404}
    assert parsed.format is EvidenceFormat.LOG and parsed.level is Level.ERROR


def test_log_without_evidence_falls_back_to_first_error_then_warning() -> None:
    assert parse_entries(
        ["INFO  started", "ERROR cache corrupt", "ERROR disk full"]
    ).causal_line == ("ERROR cache corrupt")
    only_warn = ["pos-api INFO  POST /pos/v1/sales -> 422", "pos-api WARN  validation failed: x"]
    parsed = parse_entries(only_warn)
    assert parsed.causal_line == only_warn[1] and parsed.level is Level.WARN
    assert parsed.http_statuses == (422,)  # statuses of the noise are kept, after the cause


def test_traceback_under_a_log_line_belongs_to_that_line() -> None:
    text = (
        "2024-06-02 12:04:43,318 WARNING checkout retrying\n"
        "2024-06-02 12:04:43,318 ERROR checkout payment failed for order 771204\n"
        + PY_CHAINED_CAUSE
        + "2024-06-02 12:04:43,320 INFO  uvicorn.access POST /checkout/pay 504\n"
    )
    parsed = parse_text(text)
    assert (
        parsed.causal_line
        == "2024-06-02 12:04:43,318 ERROR checkout payment failed for order 771204"
    )
    assert parsed.causal_message == "checkout payment failed for order 771204"
    assert parsed.exception_type == "TimeoutError" and parsed.trace is not None
    assert parsed.trace.startswith("Traceback") and "PaymentProviderTimeout" in parsed.trace
    assert parsed.format is EvidenceFormat.PYTHON_TRACEBACK


def test_json_log_lines() -> None:
    lines = [
        json.dumps({"level": "info", "service": "ingress", "msg": "GET /healthz", "status": 200}),
        json.dumps(
            {
                "level": "error",
                "service": "pos-payments",
                "msg": "card authorisation failed",
                "status": 502,
                "error": {"type": "CardGatewayException", "message": "502 Bad Gateway"},
            }
        ),
        json.dumps(
            {
                "level": "error",
                "logger": "checkout",
                "message": "boom",
                "exc_info": PY_DURING_HANDLING,
            }
        ),
    ]
    parsed = parse_entries(lines)
    assert parsed.format is EvidenceFormat.JSON_LOG
    assert parsed.exception_type == "CardGatewayException"
    assert parsed.causal_message == "card authorisation failed"
    assert parsed.http_statuses[0] == 502 and 200 not in parsed.http_statuses
    assert parsed.services[0] == "pos-payments" and "checkout" in parsed.services
    traced = parse_entries(lines[2:])
    assert traced.exception_type == "ZeroDivisionError"
    assert traced.frame == Frame("/app/checkout_service.py", 88, "apply_discount")


def test_ecs_style_json_with_nested_fields() -> None:
    line = json.dumps(
        {
            "@timestamp": "2024-06-02T18:22:40.200Z",
            "log": {"level": "ERROR"},
            "service": {"name": "pos-api"},
            "message": "sale rejected",
            "http": {"response": {"status_code": 422}},
            "error_code": "POS-422-QTY",
        }
    )
    parsed = parse_entries([line])
    assert parsed.level is Level.ERROR and parsed.services == ("pos-api",)
    assert parsed.error_codes == ("POS-422-QTY",) and parsed.http_statuses == (422,)


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("failed with CO-500 then PAY-408", ["CO-500", "PAY-408"]),
        ("POS-503-PLU and POS-422-QTY, again POS-503-PLU", ["POS-503-PLU", "POS-422-QTY"]),
        ("checksum SHA-256 and UTF-800 and ISO-8601 and pay-408", []),
        ("INV-503: inventory", ["INV-503"]),
    ],
)
def test_error_codes_default_patterns(text: str, codes: list[str]) -> None:
    assert find_error_codes(text) == codes


def test_error_code_patterns_are_configurable() -> None:
    patterns = [r"\bE\d{4}\b"]
    assert find_error_codes("driver raised E1234 near CO-500", patterns) == ["E1234"]
    assert parse_entries(["ERROR driver raised E1234"], patterns).error_codes == ("E1234",)


@pytest.mark.parametrize(
    ("text", "statuses"),
    [
        ("plu-service health check failed: HTTP 503", [503]),
        ("upstream status=502 after 3 tries", [502]),
        ("proxy answered 504 Gateway Timeout", [504]),
        ('10.9.0.4 - - "GET /chiller HTTP/1.1" 502 157', [502]),
        ("POST /pos/v1/sales -> 422: lines[1].plu is required", [422]),
        ("api-gateway 502 for GET /chiller/api/v1/readings", [502]),
        ("checkout payment step failed with status 408", [408]),
        ("GET /healthz -> 200, exit code 137, waited 30000ms, order 500123", []),
    ],
)
def test_http_statuses(text: str, statuses: list[int]) -> None:
    assert find_http_statuses(text) == statuses


def test_services_from_key_values_json_and_logger_names() -> None:
    lines = [
        "2024-06-02 10:00:00 ERROR payment-client giving up service=checkout",
        "pos-api WARN  validation failed",
        "2024-06-02 18:22:41 ERROR 1 --- [nio-8080-exec-3] c.r.pos.payment.Svc : failed",
    ]
    parsed = parse_entries(lines)
    assert parsed.services[:2] == ("checkout", "payment-client")
    assert "pos-api" in parsed.services
    assert not any("exec" in s for s in parsed.services)


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


def test_query_terms() -> None:
    parsed = parse_entries(["ERROR plu-service health check failed: HTTP 503 (POS-503-PLU)"])
    terms = parsed.query_terms()
    assert "plu-service health check failed" in terms
    assert "POS-503-PLU" in terms and "HTTP 503 Service Unavailable" in terms
    traced = parse_text(PY_CHAINED_CAUSE).query_terms()
    assert traced.startswith("TimeoutError timed out")
    assert parse_text("").query_terms() == ""


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
    assert parsed.query_terms() == ""
    assert enriched_query(incident) == retrieval_query(incident)


def test_enriched_query_is_the_plain_query_plus_the_terms() -> None:
    incident = {"message": "service error", "stack_trace": PY_DURING_HANDLING}
    expected = f"{retrieval_query(incident)} {parse_incident(incident).query_terms()}"
    assert enriched_query(incident) == expected
    assert "ZeroDivisionError division by zero" in enriched_query(incident)


def test_empty_and_plain_text() -> None:
    assert parse_text("") == parse_text("   \n ")
    assert parse_text("").format is EvidenceFormat.EMPTY
    plain = parse_text("the till is slow today")
    assert plain.format is EvidenceFormat.TEXT and plain.exception_type is None


def test_enriched_incident_query_puts_the_terms_before_the_raw_evidence() -> None:
    noise = [f"2024-06-02 10:00:{n % 60:02d} INFO  heartbeat {n}" for n in range(200)]
    incident = {
        "message": "service error",
        "stack_trace": PY_DURING_HANDLING,
        "logs": noise,
    }
    query = enriched_incident_query(incident)
    first_line = query.splitlines()[0]
    assert first_line == f"service error {parse_incident(incident).query_terms()}"
    assert "ZeroDivisionError division by zero" in first_line
    assert "Traceback (most recent call last):" in query  # the raw trace follows
    assert len(query) == 2000  # the noise is cut, the terms are not
