"""The Redis rate limiter counts one client's requests across both workers."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from tests.storage.helpers import Cluster

LIMIT = 5


@pytest.fixture(scope="module")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, module_postgres_url: str, redis_url: str
) -> Iterator[Cluster]:
    """Workers A and B allowing each key ``LIMIT`` requests a minute, counted in Redis."""
    workers = Cluster(
        tmp_path_factory.mktemp("limited"),
        module_postgres_url,
        redis_url,
        RCA_RATE_LIMIT_PER_MINUTE=str(LIMIT),
    )
    try:
        yield workers.start()
    finally:
        workers.stop()


def minute() -> int:
    return int(time.time() // 60)


def test_three_requests_per_worker_exceed_a_limit_of_five(cluster: Cluster) -> None:
    # Windows are fixed minutes: a burst that straddles two proves nothing, so it is redone
    # with a key whose count is still zero (the keys are random per run: no other test or
    # earlier run shares their counters, and nothing in Redis is flushed).
    for reviewer in ("ana", "bob"):
        if time.time() % 60 > 45:
            time.sleep(61 - time.time() % 60)
        window = minute()
        responses = [
            httpx.get(f"{w.base_url}/api/incidents", headers=cluster.auth(reviewer), timeout=60)
            for w in (cluster.a, cluster.b, cluster.a, cluster.b, cluster.a, cluster.b)
        ]
        if minute() == window:
            break
    else:
        pytest.fail("two bursts in a row straddled a minute boundary")

    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 429]
    limited = responses[-1]
    assert limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # Another client has its own count.
    other = httpx.get(
        f"{cluster.b.base_url}/api/incidents", headers=cluster.auth("eve"), timeout=60
    )
    assert other.status_code == 200
