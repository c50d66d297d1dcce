"""``rca bench retrieve`` at toy sizes: every mode timed on the real knowledge base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import make_settings

from app.bench.retrieve import format_retrieve_bench, retrieval_modes, run_retrieve_bench
from app.cli import main
from app.rag.engine import RetrievalEngine
from app.rag.knowledge import KnowledgeBase
from app.rag.retrieve import Retrieval

MODES = {"dense", "bm25", "hybrid"}


def test_modes_search_the_engine_collection(knowledge: KnowledgeBase) -> None:
    engine = RetrievalEngine(knowledge.store)
    try:
        modes = retrieval_modes(engine, limit=3)
        query = "CO-500 checkout crashed with ZeroDivisionError in apply_discount"
        assert set(modes) == MODES
        dense, bm25, hybrid = (modes[m](query) for m in ("dense", "bm25", "hybrid"))
    finally:
        engine.close()
    assert isinstance(dense, list) and len(dense) == knowledge.report.count
    assert isinstance(bm25, list) and bm25
    assert isinstance(hybrid, Retrieval) and 0 < len(hybrid.docs) <= 3


def test_tiny_run_times_every_mode(tmp_path: Path) -> None:
    result = run_retrieve_bench(runs=3, warmup=1, base=make_settings(tmp_path), log=lambda _: None)
    assert set(result["modes"]) == MODES
    for timing in result["modes"].values():
        assert timing["runs"] == 3
        assert 0 < timing["median_ms"] <= timing["p95_ms"]
    config = result["config"]
    assert config["queries"] == 3 and config["kb_chunks"] > 0
    assert config["median_query_chars"] > 0
    rss = result["rss_mib"]
    assert rss["peak"] >= rss["end"] > 0 and rss["start"] > 0
    text = format_retrieve_bench(result)
    assert all(mode in text for mode in MODES) and "process RSS" in text
    json.dumps(result)


def test_cli_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "retrieve.json"
    assert main(["bench", "retrieve", "--runs", "2", "--warmup", "0", "--json", str(out)]) == 0
    assert set(json.loads(out.read_text())["modes"]) == MODES
    assert "hybrid" in capsys.readouterr().out
