"""``rca bench collect`` at toy size: every contender collects from a real Prometheus."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_settings, skip_or_fail

from app.bench.collect import format_collect_bench, run_collect_bench
from app.evaluation.backfill import missing_binaries


def test_tiny_run_times_every_contender_and_finds_items(tmp_path: Path) -> None:
    missing = missing_binaries()
    if missing:
        skip_or_fail(f"{', '.join(missing)} not installed (apt-get install prometheus)")
    result = run_collect_bench(runs=3, warmup=0, base=make_settings(tmp_path), log=lambda _: None)
    assert set(result["operations"]) == {"prometheus+logs", "prometheus", "logs", "no source"}
    for timing in result["operations"].values():
        assert timing["runs"] == 3
        assert 0 < timing["median_ms"] <= timing["p95_ms"]
    items = result["items"]
    assert items["prometheus"] > 0 and items["logs"] > 0
    assert items["prometheus+logs"] == items["prometheus"] + items["logs"]
    assert items["no source"] == 0
    assert result["unavailable"] == dict.fromkeys(result["operations"], 0)
    assert "prometheus+logs" in format_collect_bench(result)
    json.dumps(result)
