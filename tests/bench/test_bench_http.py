"""The HTTP load bench: arithmetic, and a tiny real run against a uvicorn process."""

from __future__ import annotations

import pytest

from app.bench.http import format_http_bench, percentile, run_http_bench


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([], 50, 0.0), ([3.0], 95, 3.0), ([1.0, 2.0, 3.0, 4.0], 50, 2.5), ([0.0, 10.0], 95, 9.5)],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_tiny_run_reports_every_level_without_errors() -> None:
    result = run_http_bench(concurrency_levels=(1, 2), requests=3, max_seconds=60)
    rows = result["rows"]
    assert [(r["endpoint"], r["concurrency"]) for r in rows] == [
        ("/retrieve", 1),
        ("/retrieve", 2),
        ("/api/incidents", 1),
        ("/api/incidents", 2),
    ]
    assert all(r["requests"] == 3 and r["errors"] == 0 for r in rows)
    assert all(r["p95_ms"] >= r["p50_ms"] > 0 for r in rows)
    assert result["server_rss_mib"]["end"] > 50
    assert "server RSS" in format_http_bench(result)
