"""The inbox bench: the seeded rows, and a tiny real run (uvicorn, and Chromium when present)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.bench.inbox import format_inbox_bench, run_inbox_bench, seeded_rows


def test_seeded_rows_mix_statuses_families_and_groups() -> None:
    rows = list(seeded_rows(200, datetime(2026, 1, 1, tzinfo=UTC)))
    assert len({r["id"] for r in rows}) == 200
    assert [r["created_at"] for r in rows] == sorted(r["created_at"] for r in rows)
    statuses = {r["status"] for r in rows}
    assert statuses == {"awaiting_review", "approved", "rejected", "failed"}
    assert sum(r["status"] == "awaiting_review" for r in rows) == 80
    # Groups of 25 consecutive rows, each split over the five families.
    assert len({r["group_key"] for r in rows}) == 200 // 25 * 5


def test_tiny_run_reports_the_api_and_the_render() -> None:
    result = run_inbox_bench(incidents=30, runs=2, renders=1)
    assert result["incidents"] == 30
    assert set(result["api"]) == {"first page", "search", "grouped"}
    assert all(t["p95_ms"] >= t["p50_ms"] > 0 for t in result["api"].values())
    render = result["first_render"]
    assert "skipped" in render or (render["renders"] == 1 and render["p50_ms"] > 0)
    assert "first page" in format_inbox_bench(result)
