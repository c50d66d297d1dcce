"""``rca bench ingest`` on a tiny BEIR-like corpus: both contenders, every pass, no leftovers."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import chromadb
import pytest
from tests.helpers import make_settings

from app.bench.ingest import format_ingest_bench, run_ingest_bench
from app.cli import main


def write_corpus(folder: Path, texts: list[str]) -> Path:
    """A BEIR ``corpus.jsonl`` whose docs are ``title + " " + text`` = each of ``texts``."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"_id": str(i), "title": t.split()[0], "text": " ".join(t.split()[1:])}
        for i, t in enumerate(texts)
    ]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


TEXTS = [f"Abstract{i} on protein folding number {i} in yeast cells." for i in range(9)]


def bench_collections() -> set[str]:
    """The ingest bench's collections in this process's in-memory Chroma."""
    names = {c.name for c in chromadb.EphemeralClient().list_collections()}
    return {name for name in names if name.startswith("bench-ingest-")}


def test_tiny_run_reports_both_contenders_per_pass(tmp_path: Path) -> None:
    # A repeated text would share an id; it is ingested once.
    corpus = write_corpus(tmp_path / "scifact", [*TEXTS, TEXTS[0]])
    before = bench_collections()
    result = run_ingest_bench(
        docs=20, runs=2, scifact_dir=corpus, base=make_settings(tmp_path), log=lambda _: None
    )
    assert result["skipped"] == {}
    assert result["config"]["docs"] == len(TEXTS)
    assert len(result["passes"]) == 2
    for name in ("embed_only", "ingest"):
        rates = [p[name]["docs_per_s"] for p in result["passes"]]
        assert all(
            p[name]["docs"] == len(TEXTS) and p[name]["seconds"] > 0 for p in result["passes"]
        )
        assert result["docs_per_s"][name] == pytest.approx(statistics.median(rates), abs=0.01)
    assert all(p["store_ms_per_doc"] > 0 for p in result["passes"])
    assert result["store_ms_per_doc"] == statistics.median(
        p["store_ms_per_doc"] for p in result["passes"]
    )
    assert result["resync_unchanged_s"] >= 0
    assert result["rss_mib"]["peak"] >= result["rss_mib"]["end"] > 0
    assert bench_collections() == before  # every pass's collection is dropped
    text = format_ingest_bench(result)
    assert "embed_only" in text and "Chroma write" in text
    json.dumps(result)


def test_missing_corpus_is_skipped_with_the_reason(tmp_path: Path) -> None:
    result = run_ingest_bench(scifact_dir=tmp_path / "absent", log=lambda _: None)
    assert "absent" in result["skipped"]["scifact"]
    assert format_ingest_bench(result).startswith("skipped: ")


def test_cli_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_corpus(tmp_path / "scifact", TEXTS[:3])
    out = tmp_path / "ingest.json"
    args = ["bench", "ingest", "--docs", "3", "--scifact", str(corpus), "--json", str(out)]
    assert main(args) == 0
    assert json.loads(out.read_text())["config"]["docs"] == 3
    assert "ingest" in capsys.readouterr().out
