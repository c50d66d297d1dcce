"""Redaction of secrets and personal data in realistic incident text."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.incidents.redaction import Redactor, luhn_valid


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "2026-11-29T10:00:01Z ERROR payment declined pan=4111 1111 1111 1111 store=0042",
            "2026-11-29T10:00:01Z ERROR payment declined pan=[REDACTED:card] store=0042",
        ),
        (
            "card 5500-0000-0000-0004 rejected by acquirer, order 20261129123456789",
            "card [REDACTED:card] rejected by acquirer, order 20261129123456789",
        ),
        (
            "GET /v1/charges Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc",
            "GET /v1/charges Authorization: Bearer [REDACTED:token]",
        ),
        (
            "connect db password=hunter2secret user=pos api_key=sk_live_51Habc",
            "connect db password=[REDACTED:secret] user=pos api_key=[REDACTED:secret]",
        ),
        (
            '{"level":"error","client_secret":"s3cr3t-value","email":"ana.lopez@example.com"}',
            '{"level":"error","client_secret":"[REDACTED:secret]","email":"[REDACTED:email]"}',
        ),
        ("X-API-Key: 0123456789abcdef0123", "X-API-Key: [REDACTED:secret]"),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==",
            "Authorization: Basic [REDACTED:token]",
        ),
    ],
)
def test_realistic_log_lines_are_masked(line: str, expected: str) -> None:
    assert Redactor().text(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "order 1234567890123 failed at 2026-11-29 10:00:01",
        "trace id 4111111111111112 (not a valid card number)",
        "ZeroDivisionError: integer division or modulo by zero",
        "POS-503-PLU price lookup returned HTTP 503 after 3000 ms",
    ],
)
def test_innocent_text_is_left_alone(line: str) -> None:
    assert Redactor().text(line) == line


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")


def test_configured_patterns_apply() -> None:
    redactor = Redactor({"store_id": r"STORE-\d{4}"})
    assert redactor.text("till at STORE-0042 down") == "till at [REDACTED:store_id] down"


def test_nested_data_is_masked_and_other_values_kept() -> None:
    data = {"message": "pan 4111111111111111", "logs": ["token=abcdefgh123"], "count": 3}
    assert Redactor().data(data) == {
        "message": "pan [REDACTED:card]",
        "logs": ["token=[REDACTED:secret]"],
        "count": 3,
    }


def test_incidents_are_stored_masked(shared_client: TestClient) -> None:
    created = shared_client.post(
        "/api/incidents",
        json={
            "message": "card payment failed for 4111 1111 1111 1111 (ana@example.com)",
            "logs": ["POST /pay Authorization: Bearer abcdefghijklmnop status=502"],
        },
    ).json()
    assert created["incident"]["message"] == (
        "card payment failed for [REDACTED:card] ([REDACTED:email])"
    )
    assert "abcdefghijklmnop" not in str(created)
    audit = shared_client.get(f"/api/incidents/{created['id']}/audit").text
    assert "4111" not in audit and "ana@example.com" not in audit
