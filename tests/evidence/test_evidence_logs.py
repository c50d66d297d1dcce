"""Log records: noise, levels, traces under a line, JSON and ECS fields, service names."""

from __future__ import annotations

import json

from tests.evidence.helpers import PY_CHAINED_CAUSE, PY_DURING_HANDLING

from app.evidence.model import EvidenceFormat, Frame, Level
from app.evidence.parse import parse_entries, parse_text


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


def test_a_workers_pod_name_is_a_service_and_a_thread_name_is_not() -> None:
    from app.evidence.logs import services_in

    line = "2024-06-30T23:06:12Z reporting-worker-2 ERROR QueuePool limit of size 10 reached"
    assert services_in(line) == ["reporting-worker-2"]
    assert services_in("2024-06-30 ERROR [http-nio-8080-exec-1] boom") == []
    assert services_in("ERROR pool-1-thread-3 boom") == []
