"""The HTTP load bench: arithmetic, and a tiny real run against a uvicorn process."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.bench.http import format_http_bench, percentile, run_http_bench
from app.core.config import PROJECT_ROOT
from app.core.errors import ConfigurationError


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


needs_git = pytest.mark.skipif(
    shutil.which("git") is None or not (PROJECT_ROOT / ".git").exists(),
    reason="--baseline checks out another commit: needs git and this repository's .git",
)


def worktrees() -> str:
    listed = subprocess.run(
        ["git", "worktree", "list"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    return listed.stdout


@needs_git
def test_baseline_runs_another_commit_side_by_side_and_removes_its_worktree() -> None:
    before = worktrees()
    result = run_http_bench(concurrency_levels=(1,), requests=2, max_seconds=60, baseline="HEAD")
    old, ratios = result["baseline"], result["ratios"]
    assert old["ref"] == "HEAD"
    assert [(r["endpoint"], r["concurrency"]) for r in old["rows"]] == [
        (r["endpoint"], r["concurrency"]) for r in result["rows"]
    ]
    assert all(r["requests"] == 2 and r["errors"] == 0 for r in [*old["rows"], *result["rows"]])
    for ratio, now, then in zip(ratios, result["rows"], old["rows"], strict=True):
        expected = now["throughput_rps"] / then["throughput_rps"]
        assert ratio["throughput_ratio"] == pytest.approx(expected, abs=0.006)
    assert old["server_rss_mib"]["end"] > 50
    assert "side by side with HEAD" in format_http_bench(result)
    assert worktrees() == before


@needs_git
def test_an_unknown_baseline_is_a_clear_error() -> None:
    with pytest.raises(ConfigurationError, match="no-such-ref"):
        run_http_bench(concurrency_levels=(1,), requests=1, baseline="no-such-ref")
