"""One error envelope for every refusal, and rate limits that bogus keys cannot escape."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import make_settings
from tests.storage.conftest import REDIS_URL, require_service

from app.api.middleware import MemoryRateLimiter
from app.main import create_app

# Unique per run: a shared Redis must not carry this key's count over from another run.
REVIEWER = f"reviewer-key-{uuid.uuid4().hex}"


def assert_envelope(answer: object, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text  # type: ignore[attr-defined]
    body = answer.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert body["error"]["message"]


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("envelope"), max_body_bytes=2048)
    with TestClient(create_app(settings)) as client:
        yield client


def test_framework_refusals_use_the_envelope(app_client: TestClient) -> None:
    assert_envelope(app_client.get("/no/such/route"), 404, "not_found")
    assert_envelope(app_client.delete("/api/incidents"), 405, "method_not_allowed")
    bad_encoding = app_client.post(
        "/api/incidents",
        content=b'{"message": "\xff\xfe"}',
        headers={"content-type": "application/json"},
    )
    assert bad_encoding.status_code in (400, 422)
    assert set(bad_encoding.json()) == {"error"}
    deep = app_client.post(
        "/api/incidents",
        content=b"[" * 1010 + b"]" * 1010,
        headers={"content-type": "application/json"},
    )
    assert deep.status_code in (400, 422) and set(deep.json()) == {"error"}


def test_a_chunked_body_over_the_cap_is_413(app_client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"message": "'
        for _ in range(10):
            yield b"x" * 512
        yield b'"}'

    answer = app_client.post(
        "/api/incidents", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_envelope(answer, 413, "payload_too_large")


def test_the_openapi_document_declares_the_envelope(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, debug=True))) as client:
        spec = client.get("/openapi.json").json()
    responses = spec["paths"]["/api/incidents"]["post"]["responses"]
    for status in ("400", "404", "405", "413", "422", "429", "500", "503"):
        assert responses[status]["content"]["application/json"]["schema"]["$ref"].endswith(
            "ErrorResponse"
        ), status


def keyed(tmp_path: Path, **overrides: object) -> TestClient:
    settings = make_settings(
        tmp_path,
        auth="on",
        api_keys=SecretStr(f"reviewer:{REVIEWER}:ana"),
        rate_limit_per_minute=5,
        **overrides,
    )
    return TestClient(create_app(settings))


def assert_bogus_keys_are_limited_per_address(client: TestClient) -> None:
    answers = [
        client.get("/api/incidents", headers={"X-API-Key": f"bogus-key-number-{i:04d}"})
        for i in range(8)
    ]
    statuses = [a.status_code for a in answers]
    # Other tests may share the address bucket on a shared Redis: at most 5 get through.
    assert statuses.count(401) <= 5 and statuses[-3:] == [429] * 3, statuses
    assert set(statuses) <= {401, 429}
    limited = answers[-1]
    assert_envelope(limited, 429, "rate_limited")
    assert int(limited.headers["Retry-After"]) >= 1
    # A valid key from the same address is served under its own limit.
    assert client.get("/api/incidents", headers={"X-API-Key": REVIEWER}).status_code == 200


def test_failed_authentication_counts_against_the_client_address(tmp_path: Path) -> None:
    with keyed(tmp_path) as client:
        assert_bogus_keys_are_limited_per_address(client)
        limiter = client.app.state.rate_limiter  # type: ignore[attr-defined]
        assert isinstance(limiter, MemoryRateLimiter) and len(limiter) <= 2


def test_failed_authentication_is_limited_with_redis_too(tmp_path: Path) -> None:
    url = require_service("Redis", REDIS_URL, 6379)
    with keyed(tmp_path, redis_url=url) as client:
        assert_bogus_keys_are_limited_per_address(client)


async def test_the_in_process_limiter_is_bounded_by_100k_distinct_clients() -> None:
    limiter = MemoryRateLimiter(max_buckets=1000)
    for i in range(100_000):
        await limiter.hit(f"key:{i}", 10)
    assert len(limiter) <= 1000
    # The newest clients are still counted: a second request over a limit of 1 is refused.
    retry_after = await limiter.hit("key:99999", 1)
    assert retry_after is not None and retry_after >= 1
