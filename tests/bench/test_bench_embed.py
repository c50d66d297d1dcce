"""``rca bench embed`` at toy sizes: the output structure, offline stock function, skip rules."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tests.helpers import KNOWLEDGE_PATH, MODELS_DIR, SCIFACT_DIR, require_shared

from app.bench.common import scifact_docs, time_calls, time_passes
from app.bench.embed import (
    STOCK_SIDE_FILES,
    BareSession,
    format_embed_bench,
    knowledge_docs,
    run_embed_bench,
    stock_function_class,
    stock_unavailable,
)
from app.cli import main
from app.rag.embedding import default_embedder, default_model_path, load_model, open_session
from app.rag.ingest import CHUNK_DELIMITER

TIMING_KEYS = {"runs", "median_ms", "p95_ms"}
PASS_KEYS = {"docs", "seconds", "docs_per_s"}


def test_time_calls_interleaves_and_rotates() -> None:
    calls: list[tuple[str, int]] = []
    timings = time_calls(
        {"a": lambda i: calls.append(("a", i)), "b": lambda i: calls.append(("b", i))},
        runs=3,
        warmup=1,
    )
    # One warm-up round, then three rounds; who goes first rotates.
    assert calls == [("a", 0), ("b", 0), ("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)]
    assert set(timings) == {"a", "b"}
    assert all(t.runs == 3 and 0 <= t.median_ms <= t.p95_ms for t in timings.values())


def test_time_passes_embeds_every_text_once_per_embedder() -> None:
    seen: dict[str, list[str]] = {"a": [], "b": []}
    texts = [f"t{i}" for i in range(7)]
    passes = time_passes(
        {"a": seen["a"].extend, "b": seen["b"].extend},
        texts,
        chunk=3,
    )
    # Two warm-up texts, then every text exactly once, in order.
    assert seen["a"] == seen["b"] == texts[:2] + texts
    assert all(p.docs == 7 and p.docs_per_s > 0 for p in passes.values())


def test_knowledge_docs_repeat_the_entries() -> None:
    entries = [e for e in KNOWLEDGE_PATH.read_text().split(CHUNK_DELIMITER) if e.strip()]
    docs = knowledge_docs(KNOWLEDGE_PATH, len(entries) + 3)
    assert len(docs) == len(entries) + 3
    assert docs[len(entries)] == docs[0] == entries[0].strip()


def test_bare_sessions_match_our_embedder() -> None:
    texts = ["payment timeout", "inventory service 503 connection pool exhausted at store 12"]
    ours = default_embedder().embed_documents(texts)
    sessions = [
        open_session(load_model(default_model_path())),
        ort.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"]),
    ]
    for session in sessions:
        np.testing.assert_allclose(BareSession(session).embed(texts), ours, atol=1e-5)


def test_bench_without_shared_data_skips_the_stock_and_scifact_parts(tmp_path: Path) -> None:
    result = run_embed_bench(
        runs=3,
        kb_docs=2,
        scifact_count=10,
        warmup=1,
        models_dir=tmp_path / "no-models",
        scifact_dir=tmp_path / "no-scifact",
        log=lambda _: None,
    )
    assert set(result["per_query"]) == {"ours", "bare", "bare_pinned"}
    assert all(set(t) == TIMING_KEYS and t["runs"] == 3 for t in result["per_query"].values())
    assert set(result["docs_per_s"]) == {"kb"}
    assert result["docs_per_s"]["kb"]["docs"] == 2
    assert set(result["docs_per_s"]["kb"]["ours"]) == PASS_KEYS
    assert set(result["skipped"]) == {"stock", "scifact"}
    assert "no-models" in result["skipped"]["stock"]
    names = [r["name"] for r in result["ratios"]]
    assert "ours/bare per query (median ms)" in names
    stock_rows = [r for r in result["ratios"] if "stock" in r["name"]]
    assert stock_rows and all(r["value"] is None and r["met"] is None for r in stock_rows)
    assert result["agreement"]["bare_vs_ours"]["min_cosine"] > 0.9999
    assert result["agreement"]["bare_pinned_vs_ours"]["min_cosine"] > 0.9999
    assert "bare/bare pinned docs/s (kb)" in names
    text = format_embed_bench(result)
    assert "per query" in text and "skipped:" in text
    json.dumps(result)


def test_stock_function_never_downloads(tmp_path: Path) -> None:
    # An empty models folder: the symlinks dangle, Chroma thinks files are missing.
    assert stock_unavailable(tmp_path) is not None
    with stock_function_class(tmp_path, default_model_path()) as stock_class:
        with pytest.raises(RuntimeError, match="refuses to download"):
            stock_class()(["query"])


def test_stock_path_with_the_shared_models() -> None:
    models_dir = require_shared(MODELS_DIR)
    assert all((models_dir / name).is_file() for name in STOCK_SIDE_FILES)
    assert stock_unavailable(models_dir) is None
    result = run_embed_bench(
        runs=2, kb_docs=2, scifact_count=0, models_dir=models_dir, warmup=1, log=lambda _: None
    )
    assert set(result["per_query"]) == {
        "ours",
        "bare",
        "bare_pinned",
        "stock_new_instance",
        "stock_reused",
    }
    assert set(result["docs_per_s"]["kb"]) == {
        "docs",
        "ours",
        "bare",
        "bare_pinned",
        "stock_reused",
    }
    assert result["skipped"] == {}
    # Same model file: the stock function's vectors agree with ours despite its padding.
    assert result["agreement"]["stock_vs_ours"]["min_cosine"] > 0.999
    stock_rows = [r for r in result["ratios"] if "stock" in r["name"]]
    assert all(r["value"] is not None for r in stock_rows)


def test_scifact_docs_join_title_and_text() -> None:
    folder = require_shared(SCIFACT_DIR)
    docs = scifact_docs(folder, 3)
    first = json.loads((folder / "corpus.jsonl").open().readline())
    assert len(docs) == 3 and docs[0] == f"{first['title']} {first['text']}".strip()


def test_cli_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    args = [
        "bench",
        "embed",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--kb-docs",
        "1",
        "--scifact-docs",
        "0",
    ]
    args += ["--models-dir", str(tmp_path / "none"), "--json", str(out)]
    assert main(args) == 0
    assert set(json.loads(out.read_text())["per_query"]) == {"ours", "bare", "bare_pinned"}
    assert "ours/bare" in capsys.readouterr().out
