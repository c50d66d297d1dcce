"""The BEIR loader, the reduced corpus, the mode runner and its embedding cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.fakes import CountingEmbedder, HashEmbedder
from tests.rag.rag_support import Reply, RerankServer

from app.core.errors import ConfigurationError
from app.evaluation.beir import evaluate_beir, load_beir, load_qrels
from app.evaluation.modes import ModeOptions, rerank_order
from app.evaluation.windows import build_windows, wordpiece_offsets
from app.rag.rerank import HttpReranker, RerankScore

CORPUS = [
    {"_id": "d1", "title": "Payment timeout", "text": "the provider answered after 30 seconds"},
    {"_id": "d2", "title": "", "text": "inventory service returned 503"},
    {"_id": "d3", "title": "Chiller", "text": "gateway 502 for the chiller"},
    {"_id": "d4", "title": "Discount", "text": "division by zero in the discount"},
    {"_id": "d5", "title": "Till", "text": "quantity must be positive"},
    {"_id": "d6", "title": "Card", "text": "card terminal declined"},
]
QUERIES = [
    {"_id": "q1", "text": "payment provider timeout", "metadata": {}},
    {"_id": "q2", "text": "chiller gateway 502", "metadata": {}},
    {"_id": "q3", "text": "not judged in test", "metadata": {}},
    {"_id": "q4", "text": "discount division by zero", "metadata": {}},
]
TEST_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\nq4\td4\t2\nq4\td6\t0\n"


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(TEST_QRELS)
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td2\t1\n")
    return folder


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny")


def test_loads_the_judged_queries_of_the_split(beir_dir: Path) -> None:
    data = load_beir(beir_dir, "test")
    assert data.name == "tiny"
    assert [q.id for q in data.queries] == ["q1", "q2", "q4"]
    assert data.qrels == {"q1": {"d1": 1}, "q2": {"d3": 1}, "q4": {"d4": 2, "d6": 0}}
    assert data.doc_ids == ["d1", "d2", "d3", "d4", "d5", "d6"]
    assert data.doc_texts[0] == "Payment timeout the provider answered after 30 seconds"
    assert data.doc_texts[1] == "inventory service returned 503"
    assert data.doc_titles[:2] == ["Payment timeout", ""]
    assert data.doc_bodies[0] == "the provider answered after 30 seconds"
    corpus = data.corpus()
    assert corpus.ids == data.doc_ids and corpus.key == data.corpus_key
    assert corpus.texts_with_title_repeated(3)[0] == (
        "Payment timeout Payment timeout Payment timeout the provider answered after 30 seconds"
    )
    assert data.corpus_size == 6
    train = load_beir(beir_dir, "train")
    assert [q.id for q in train.queries] == ["q3"]


def test_limit_keeps_the_first_judged_queries(beir_dir: Path) -> None:
    data = load_beir(beir_dir, "test", limit=2)
    assert [q.id for q in data.queries] == ["q1", "q2"]
    assert set(data.qrels) == {"q1", "q2"}


def test_max_corpus_keeps_judged_docs_plus_the_first_others(beir_dir: Path) -> None:
    data = load_beir(beir_dir, "test", limit=2, max_corpus=1)
    # judged d1, d3; first other in file order: d2
    assert data.doc_ids == ["d1", "d2", "d3"]
    assert data.corpus_size == 6
    assert data.corpus_key != load_beir(beir_dir, "test").corpus_key
    # judged-but-irrelevant docs (grade 0) are kept too: q4 judges d4 and d6
    assert load_beir(beir_dir, "test", max_corpus=0).doc_ids == ["d1", "d3", "d4", "d6"]


def test_qrels_header_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n1\t2\t1\n\n1\t3\t0\n")
    assert load_qrels(path) == {"1": {"2": 1, "3": 0}}


def test_malformed_inputs_name_the_place(beir_dir: Path) -> None:
    (beir_dir / "qrels" / "bad.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(ConfigurationError, match=r"bad\.tsv:2"):
        load_beir(beir_dir, "bad")
    with pytest.raises(ConfigurationError, match="cannot read qrels"):
        load_beir(beir_dir, "dev")
    with pytest.raises(ConfigurationError, match="is judged"):
        load_beir(beir_dir, "test", limit=0)
    (beir_dir / "corpus.jsonl").write_text('{"_id": "d1"}\nnot json\n')
    with pytest.raises(ConfigurationError, match=r"corpus\.jsonl:2"):
        load_beir(beir_dir, "test")


def test_modes_rank_and_dense_embeddings_are_cached(beir_dir: Path, tmp_path: Path) -> None:
    data = load_beir(beir_dir, "test")
    cache = tmp_path / "cache"
    first = CountingEmbedder()
    result = evaluate_beir(data, ["dense", "bm25", "hybrid"], lambda: first, cache_dir=cache)
    assert first.documents_embedded == 6
    assert list(cache.glob("*.npy")) and not list(cache.glob("*.tmp*"))
    assert result["dataset"] == "tiny" and result["split"] == "test"
    assert (result["queries"], result["docs"], result["corpus_docs"]) == (3, 6, 6)
    assert set(result["modes"]) == {"dense", "bm25", "hybrid"}
    for metrics in result["modes"].values():
        assert {"ndcg@10", "mrr@10", "recall@100", "hit@5"} <= set(metrics)
        assert all(0.0 <= metrics[m] <= 1.0 for m in ("ndcg@10", "mrr@10", "recall@100"))
    # Word overlap makes every answer findable by BM25 at rank 1.
    assert result["modes"]["bm25"]["mrr@10"] == 1.0

    second = CountingEmbedder()
    again = evaluate_beir(data, ["dense"], lambda: second, cache_dir=cache)
    assert second.documents_embedded == 0
    assert again["modes"]["dense"]["ndcg@10"] == result["modes"]["dense"]["ndcg@10"]


def test_windowed_tuned_and_blended_modes_run_side_by_side(beir_dir: Path, tmp_path: Path) -> None:
    data = load_beir(beir_dir, "test")
    cache = tmp_path / "cache"
    embedder = CountingEmbedder()
    modes = ["dense", "bm25", "hybrid", "dense-window", "bm25-tuned", "blend"]
    options = ModeOptions(rrf_k=2, window_tokens=4, window_stride=2, blend_weight=0.5)
    result = evaluate_beir(data, modes, lambda: embedder, cache_dir=cache, options=options)
    assert list(result["modes"]) == modes
    # 6 doc vectors for dense, the windows once for dense-window; blend embeds nothing new.
    windows, _ = build_windows(data.doc_titles, data.doc_bodies, wordpiece_offsets, 4, 2)
    assert len(windows) > 6
    assert embedder.documents_embedded == 6 + len(windows)
    names = sorted(p.name for p in cache.glob("*.npy"))
    assert len(names) == 2 and names[0].endswith("-win4s2.npy")
    assert result["modes"]["bm25-tuned"]["mrr@10"] == 1.0
    for metrics in result["modes"].values():
        assert 0.0 <= metrics["ndcg@10"] <= 1.0


def test_bm25_only_never_builds_the_embedder(beir_dir: Path) -> None:
    def no_embedder() -> HashEmbedder:
        raise AssertionError("bm25 must not load the model")

    result = evaluate_beir(load_beir(beir_dir, "test"), ["bm25"], no_embedder)
    assert set(result["modes"]) == {"bm25"}


def test_unknown_mode_is_refused(beir_dir: Path) -> None:
    with pytest.raises(ConfigurationError, match="unknown mode"):
        evaluate_beir(load_beir(beir_dir, "test"), ["dense", "splade"], HashEmbedder)


def test_query_without_known_terms_gets_an_empty_bm25_ranking(beir_dir: Path) -> None:
    from app.evaluation.modes import Bm25Ranker

    ranker = Bm25Ranker(load_beir(beir_dir, "test").corpus())
    ranked = ranker.rank(["the of and", "zzzz qqqq", "chiller"], 10)
    assert ranked[0] == [] and ranked[1] == []
    assert ranked[2][0][0] == "d3"


def test_cli_passes_the_mode_options_and_records_them(
    beir_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    out = tmp_path / "result.json"
    argv = ["eval", "beir", str(beir_dir), "--modes", "bm25,bm25-tuned", "--no-cache"]
    code = main([*argv, "--rrf-k", "2", "--blend-weight", "0.3", "--json", str(out)])
    assert code == 0
    assert "bm25-tuned" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert list(result["modes"]) == ["bm25", "bm25-tuned"]
    assert result["options"] == {
        "rrf_k": 2,
        "depth": 100,
        "window_tokens": 96,
        "window_stride": 48,
        "blend_weight": 0.3,
        "rerank_depth": 40,
    }
    assert main([*argv, "--window-tokens", "8", "--window-stride", "9"]) == 2
    assert "stride" in capsys.readouterr().err


def word_overlap(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A crude cross-encoder: each text scores the words it shares with the query (TEI shape)."""
    query = set(body["query"].lower().split())
    return [
        {"index": i, "score": float(len(query & set(text.lower().split())))}
        for i, text in enumerate(body["texts"])
    ]


def test_rerank_order_puts_scored_first_and_keeps_the_rest_in_fused_order() -> None:
    fused = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
    scores = [RerankScore(2, 0.9), RerankScore(0, 0.5), RerankScore(3, 0.5), RerankScore(9, 1.0)]
    assert rerank_order(fused, scores) == [
        ("c", 0.9),
        ("a", 0.5),
        ("d", 0.5),
        ("b", float("-inf")),
    ]
    assert rerank_order(fused, []) == [(d, float("-inf")) for d, _ in fused]


def test_hybrid_rerank_sends_the_top_candidates_to_a_real_reranker(beir_dir: Path) -> None:
    data = load_beir(beir_dir, "test")
    with RerankServer() as server:
        server.script = [Reply(body=word_overlap)]
        reranker = HttpReranker(server.base_url, "tei")
        options = ModeOptions(rerank_depth=3)
        result = evaluate_beir(
            data, ["hybrid", "hybrid+rerank"], HashEmbedder, options=options, reranker=reranker
        )
        reranker.close()
    assert [r["body"]["query"] for r in server.requests] == [q.text for q in data.queries]
    assert all(len(r["body"]["texts"]) == 3 for r in server.requests)
    assert result["modes"]["hybrid+rerank"]["mrr@10"] == 1.0
    assert result["modes"]["hybrid+rerank"]["recall@100"] == result["modes"]["hybrid"]["recall@100"]


def test_a_failing_reranker_keeps_the_fused_order(
    beir_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = load_beir(beir_dir, "test")
    with RerankServer() as server:
        server.script = [Reply(status=503, body={"error": "overloaded"})]
        reranker = HttpReranker(server.base_url, "tei", timeout_seconds=5)
        result = evaluate_beir(data, ["hybrid", "hybrid+rerank"], HashEmbedder, reranker=reranker)
        reranker.close()
    modes = result["modes"]
    assert modes["hybrid+rerank"]["ndcg@10"] == modes["hybrid"]["ndcg@10"]
    assert caplog.text.count("keeps the fused order") == len(data.queries)


def test_hybrid_rerank_without_a_reranker_is_refused(beir_dir: Path) -> None:
    with pytest.raises(ConfigurationError, match="RCA_RERANK_URL"):
        evaluate_beir(load_beir(beir_dir, "test"), ["hybrid+rerank"], HashEmbedder)
