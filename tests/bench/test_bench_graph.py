"""``rca bench graph`` at toy sizes: incidents reach review and are approved, every one counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import make_settings

from app.bench.graph import format_graph_bench, run_graph_bench
from app.cli import main


def test_tiny_run_creates_and_approves_every_incident(tmp_path: Path) -> None:
    result = run_graph_bench(runs=3, warmup=1, base=make_settings(tmp_path), log=lambda _: None)
    assert set(result["operations"]) == {"create_to_review", "approve"}
    for timing in result["operations"].values():
        assert timing["runs"] == 3
        assert 0 < timing["median_ms"] <= timing["p95_ms"]
    # One incident primes the queue, then one per warm-up and timed round; each round approves one.
    assert result["counts"] == {"created": 5, "approved": 4, "pending": 1}
    # Every create reports another incident: warm-up and timed runs never share one.
    assert result["config"]["incidents"] == 5
    rss = result["rss_mib"]
    assert rss["peak"] >= rss["end"] > 0 and rss["ready"] > 0
    text = format_graph_bench(result)
    assert "create_to_review" in text and "5 incidents created, 4 approved" in text
    json.dumps(result)


def test_cli_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "graph.json"
    assert main(["bench", "graph", "--runs", "1", "--warmup", "0", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["counts"]["approved"] == 1
    assert "approve" in capsys.readouterr().out
