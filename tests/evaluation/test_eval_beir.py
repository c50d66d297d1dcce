"""The BEIR loader, the reduced corpus, and the product engine scored in named configurations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.fakes import CountingEmbedder

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.evaluation.beir import corpus_chunks, doc_ranking, evaluate_beir, load_beir, load_qrels
from app.evaluation.configurations import DEFAULT_MODES, parse_mode
from app.evaluation.embedding_cache import CachedEmbedder
from app.rag.engine_config import EngineConfig
from app.rag.windows import PARENT_KEY

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


def settings() -> Settings:
    return Settings(_env_file=None)  # type: ignore[call-arg]


def modes(*specs: str) -> list:  # type: ignore[type-arg]
    return [parse_mode(spec, settings()) for spec in specs]


def test_the_shipped_mode_is_the_products_configuration() -> None:
    shipped = parse_mode("shipped", settings())
    assert shipped.engine == EngineConfig.from_settings(settings())
    assert shipped.engine == EngineConfig()  # one default per knob
    assert parse_mode("keyword", settings()).engine.legs == "keyword"
    tuned = parse_mode(
        "shipped:fusion=zscore:dense_weight=0.7:k1=0.9:title=2:windows=0", settings()
    )
    assert (tuned.engine.fusion, tuned.engine.dense_weight) == ("zscore", 0.7)
    assert (tuned.engine.bm25.k1, tuned.engine.bm25.title_repeats) == (0.9, 2)
    assert tuned.window_tokens == 0
    assert parse_mode("shipped:spelling_repair=on", settings()).engine.spelling_repair is True


@pytest.mark.parametrize(
    "spec", ["splade", "shipped:nonsense=1", "shipped:k1=x", "shipped:fusion=max", "shipped:bad"]
)
def test_unknown_or_malformed_modes_are_refused(spec: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_mode(spec, settings())


def test_long_docs_are_stored_as_windows_of_their_parent(beir_dir: Path) -> None:
    data = load_beir(beir_dir, "test")
    whole = corpus_chunks(data, 0, 0)
    assert [c.id for c in whole] == data.doc_ids
    assert whole[0].metadata == {PARENT_KEY: "d1", "title": "Payment timeout"}
    windows = corpus_chunks(data, 4, 2)
    assert len(windows) > len(whole)
    assert {c.metadata[PARENT_KEY] for c in windows} == set(data.doc_ids)
    assert all(c.text.startswith("Payment timeout ") for c in windows if c.id.startswith("d1#"))


def test_the_product_engine_ranks_every_mode_and_embeddings_are_cached(
    beir_dir: Path, tmp_path: Path
) -> None:
    data = load_beir(beir_dir, "test")
    inner = CountingEmbedder()
    cache = CachedEmbedder(inner, tmp_path / "cache")
    result = evaluate_beir(data, modes(*DEFAULT_MODES, "shipped:windows=4:stride=2"), cache)
    cache.close()
    # 3 queries, 6 docs, and the windows of the windowed mode; nothing twice.
    assert inner.documents_embedded == cache.computed > 9
    assert result["dataset"] == "tiny" and result["split"] == "test"
    assert (result["queries"], result["docs"], result["corpus_docs"]) == (3, 6, 6)
    assert list(result["modes"]) == [*DEFAULT_MODES, "shipped:windows=4:stride=2"]
    for metrics in result["modes"].values():
        assert {"ndcg@10", "mrr@10", "recall@100", "hit@1", "hit@5", "short@10"} <= set(metrics)
        assert all(0.0 <= metrics[m] <= 1.0 for m in ("ndcg@10", "mrr@10", "recall@100"))
    # Word overlap makes every answer findable by the keyword leg at rank 1.
    assert result["modes"]["keyword"]["mrr@10"] == 1.0
    assert result["modes"]["shipped"]["config"]["legs"] == "hybrid"
    assert result["modes"]["shipped:windows=4:stride=2"]["config"]["window_tokens"] == 4

    again = CountingEmbedder()
    reopened = CachedEmbedder(again, tmp_path / "cache")
    second = evaluate_beir(data, modes("shipped"), reopened)
    assert again.documents_embedded == 0
    assert second["modes"]["shipped"]["ndcg@10"] == result["modes"]["shipped"]["ndcg@10"]


def test_windows_count_as_their_document() -> None:
    from tests.fakes import ranked_doc

    docs = [
        ranked_doc("d1#w1", "x", {PARENT_KEY: "d1"}),
        ranked_doc("d2", "y"),
    ]
    assert doc_ranking(docs) == ["d1", "d2"]


def test_cli_reports_the_shipped_engine_and_its_legs(
    beir_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    out = tmp_path / "result.json"
    code = main(
        [
            "eval",
            "beir",
            str(beir_dir),
            "--no-cache",
            "--modes",
            "shipped,keyword",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    assert "keyword" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert list(result["modes"]) == ["shipped", "keyword"]
    assert result["modes"]["keyword"]["config"]["legs"] == "keyword"
    assert main(["eval", "beir", str(beir_dir), "--modes", "shipped:windows=8:stride=9"]) == 2
