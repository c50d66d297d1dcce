"""Error codes (default and configured patterns) and HTTP error statuses."""

from __future__ import annotations

import pytest

from app.evidence.parse import parse_entries
from app.evidence.patterns import find_error_codes, find_http_statuses


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
        ("pos-api WARN  POST /pos/v1/sales 422 lines must not be empty", [422]),
        ("GET /v1/stock/4411 503 12ms", [503]),
        ("GET /pos/v1/health 200 3ms", []),
        ("ERROR pos-api PLU service unavailable (503) for sku 4011", [503]),
    ],
)
def test_http_statuses(text: str, statuses: list[int]) -> None:
    assert find_http_statuses(text) == statuses
