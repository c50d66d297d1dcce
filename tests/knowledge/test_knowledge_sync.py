"""Incremental ingest on a persistent store: only new content is embedded; models never mix."""

from __future__ import annotations

import logging
from pathlib import Path

import chromadb
import pytest
from tests.helpers import unique_name
from tests.knowledge.helpers import CountingEmbedder, edit_first_entry, make_sources

from app.core.config import Settings
from app.core.errors import ConfigurationError, Conflict, KnowledgeBaseError
from app.rag.embedding import ChromaEmbeddingFunction, MiniLmEmbedder
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.knowledge import build_knowledge_base
from app.rag.store import MODEL_KEY, MODEL_SHA_KEY, VectorStore


def persistent(tmp_path: Path, folder: Path, name: str) -> Settings:
    return Settings(
        chroma_path=tmp_path / "chroma",
        knowledge_dir=folder,
        collection_name=name,
        window_tokens=0,  # counts per entry; the windowed ingest has its own test below
        _env_file=None,  # type: ignore[call-arg]
    )


def test_restart_with_an_unchanged_corpus_embeds_nothing(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    settings = persistent(tmp_path, folder, unique_name("kb"))
    first_embedder = CountingEmbedder()
    first = build_knowledge_base(settings, first_embedder).report
    total = first.count
    assert total > 10 and first.added == total and first.embedded == total
    assert first_embedder.embedded == total

    second_embedder = CountingEmbedder()
    second = build_knowledge_base(settings, second_embedder).report
    assert (second.added, second.unchanged, second.removed, second.embedded) == (0, total, 0, 0)
    assert second_embedder.embedded == 0
    assert second.count == total and second.version == first.version
    assert second.ids_by_code == first.ids_by_code


def test_a_changed_entry_is_one_add_and_one_removal(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    settings = persistent(tmp_path, folder, unique_name("kb"))
    first = build_knowledge_base(settings, CountingEmbedder()).report
    edit_first_entry(folder)
    (folder / "runbooks" / "store-network.md").unlink()
    embedder = CountingEmbedder()
    knowledge = build_knowledge_base(settings, embedder)
    report = knowledge.report
    assert report.added == 1 and report.embedded == 1 and embedder.embedded == 1
    assert report.removed == 1 + 2  # the old entry and the deleted runbook's two sections
    assert report.count == first.count - 2
    assert report.ids_by_code["CO-500"] != first.ids_by_code["CO-500"]
    assert report.ids_by_code["PAY-408"] == first.ids_by_code["PAY-408"]
    assert sorted(knowledge.store.ids()) == sorted(c.id for c in knowledge.store.all_chunks())
    assert first.ids_by_code["CO-500"] not in knowledge.store.ids()


def test_moved_entries_refresh_metadata_without_embedding(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    settings = persistent(tmp_path, folder, unique_name("kb"))
    build_knowledge_base(settings, CountingEmbedder())
    docs = folder / "error_docs.txt"
    entries = docs.read_text().split("\n---\n")
    docs.write_text("\n---\n".join(reversed([e.strip() for e in entries])) + "\n")
    (folder / "runbooks" / "payments.md").rename(folder / "payments.md")
    embedder = CountingEmbedder()
    knowledge = build_knowledge_base(settings, embedder)
    assert knowledge.report.embedded == 0 and embedder.embedded == 0
    stored = {c.id: c.metadata for c in knowledge.store.all_chunks()}
    pay = stored[knowledge.report.ids_by_code["PAY-408"]]
    assert pay["entry"] == 8  # was 3 of 10
    assert {m["source"] for m in stored.values() if m.get("kind") == "runbook"} == {
        "payments.md",
        "runbooks/store-network.md",
    }


def test_ephemeral_backend_rebuilds_through_the_same_path(caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(
        collection_name=unique_name("kb"),
        window_tokens=0,
        _env_file=None,  # type: ignore[call-arg]
    )
    with caplog.at_level(logging.INFO, logger="app"):
        first = build_knowledge_base(settings, CountingEmbedder()).report
        again = build_knowledge_base(settings, CountingEmbedder()).report
    assert first.added == again.added == again.embedded == 10 and again.unchanged == 0
    summaries = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ingest: ")]
    assert summaries == ["ingest: added=10 unchanged=0 removed=0 embedded=10"] * 2
    assert "ingested 10 error-doc chunk(s)" in [r.getMessage() for r in caplog.records]


def test_refuses_to_mix_two_models_in_one_persisted_collection(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    settings = persistent(tmp_path, folder, unique_name("kb"))
    build_knowledge_base(settings, CountingEmbedder())
    with pytest.raises(ConfigurationError) as caught:
        build_knowledge_base(settings, CountingEmbedder(model_id="another-model"))
    assert "refusing to mix" in caught.value.message
    # The collection is untouched, and an explicit rebuild switches models.
    rebuilt = build_knowledge_base(settings, CountingEmbedder("another-model"), rebuild=True)
    assert rebuilt.report.added == rebuilt.report.count
    assert rebuilt.store.recorded_model()["id"] == "another-model"


def test_model_is_recorded_and_adopted_by_empty_or_legacy_collections(
    embedder: MiniLmEmbedder, tmp_path: Path
) -> None:
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    name = unique_name("legacy")
    # What the previous version created: the model id recorded, its digest not.
    legacy = client.create_collection(
        name,
        embedding_function=ChromaEmbeddingFunction(embedder),  # type: ignore[arg-type]
        metadata={"hnsw:space": "cosine", MODEL_KEY: "all-MiniLM-L6-v2-onnx-int8"},
    )
    legacy.add(ids=["a"], documents=["x"], embeddings=[[0.1] * 384])
    store = VectorStore(client, embedder, name)
    recorded = store.recorded_model()
    assert recorded == store.model and len(recorded["sha256"]) == 64
    assert client.get_collection(name).metadata[MODEL_SHA_KEY] == recorded["sha256"]
    empty = client.create_collection(
        unique_name("empty"),
        embedding_function=ChromaEmbeddingFunction(embedder),  # type: ignore[arg-type]
        metadata={MODEL_KEY: "old-model"},
    )
    adopted = VectorStore(client, CountingEmbedder(), empty.name)
    assert adopted.recorded_model()["id"] == CountingEmbedder.model_id


def test_malformed_source_leaves_the_collection_untouched(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    settings = persistent(tmp_path, folder, unique_name("kb"))
    knowledge = build_knowledge_base(settings, CountingEmbedder())
    before = sorted(knowledge.store.ids())
    (folder / "bad.txt").write_text("Symptoms: no error line\n")
    engine = RetrievalEngine(knowledge.store, EngineConfig())
    refreshed: list[bool] = []
    try:
        with pytest.raises(KnowledgeBaseError):
            knowledge.reload(after=[lambda: refreshed.append(True), engine.refresh])
    finally:
        engine.close()
    assert sorted(knowledge.store.ids()) == before and refreshed == [True]
    assert not knowledge.reloading


def test_only_one_reload_at_a_time(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    knowledge = build_knowledge_base(
        persistent(tmp_path, folder, unique_name("kb")), CountingEmbedder()
    )

    def nested() -> None:
        with pytest.raises(Conflict):
            knowledge.reload()

    report = knowledge.reload(after=[nested])
    assert report.embedded == 0 and knowledge.report is report


def test_windowed_ingest_stores_windows_beside_documents_and_lists_documents_only(
    tmp_path: Path,
) -> None:
    folder = make_sources(tmp_path)
    name = unique_name("kb")
    plain = build_knowledge_base(persistent(tmp_path / "plain", folder, name), CountingEmbedder())
    settings = persistent(tmp_path, folder, name).model_copy(
        update={"window_tokens": 64, "window_stride": 32}
    )
    embedder = CountingEmbedder()
    knowledge = build_knowledge_base(settings, embedder)
    report = knowledge.report
    assert report.windows > 0 and report.count == plain.report.count + report.windows
    assert knowledge.store.count() == report.count == embedder.embedded
    assert report.version == plain.report.version and report.ids_by_code == plain.report.ids_by_code
    # Windows are never listed as documents or families.
    assert {c.id for c in knowledge.documents()} == {c.id for c in plain.documents()}
    assert knowledge.families() == plain.families()
    # A reload keeps the windows: nothing new to embed.
    again = knowledge.reload()
    assert (again.added, again.removed, again.windows) == (0, 0, report.windows)
