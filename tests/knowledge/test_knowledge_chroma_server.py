"""Ingest and retrieval against a real Chroma server (``RCA_CHROMA_URL``), incrementally."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import unique_name
from tests.knowledge.helpers import ChromaServer, edit_first_entry, make_sources

from app.core.config import Settings
from app.rag.embedding import MiniLmEmbedder
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.knowledge import build_knowledge_base


def test_server_ingest_is_incremental_and_retrieval_follows_reloads(
    chroma_server: ChromaServer, embedder: MiniLmEmbedder, tmp_path: Path
) -> None:
    folder = make_sources(tmp_path)
    settings = Settings(
        chroma_url=chroma_server.url,
        chroma_path=tmp_path / "ignored",  # the server wins over a persistent path
        knowledge_dir=folder,
        collection_name=unique_name("kb"),
        window_tokens=0,  # counts per entry below; windows: test_knowledge_sync
        _env_file=None,  # type: ignore[call-arg]
    )
    knowledge = build_knowledge_base(settings, embedder)
    assert knowledge.backend == "server"
    assert not (tmp_path / "ignored").exists()
    total = knowledge.report.count
    assert knowledge.report.added == knowledge.report.embedded == total > 10

    engine = RetrievalEngine(knowledge.store, EngineConfig(score_floor=0.0))
    try:
        hit = engine.retrieve("payment provider timeout, retries with idempotency key", 5).docs
        assert {d.metadata.get("error_code") for d in hit[:3]} >= {"PAY-408"}
        query = "feature flag payments.secondary_provider and post in the incident channel"
        runbook = engine.retrieve(query, 3).docs[0]
        assert runbook.metadata["source"] == "runbooks/payments.md"
        assert runbook.metadata["error_code"] == "PAY-408"

        # A second process would see the same: a fresh client embeds nothing.
        again = build_knowledge_base(settings, embedder)
        assert (again.report.unchanged, again.report.embedded) == (total, 0)

        edit_first_entry(folder)
        (folder / "runbooks" / "extra.md").write_text(
            "# Freezer alarms\n\nWhen the freezer alarm sounds twice, call the facilities desk.\n"
        )
        report = again.reload(after=[engine.refresh])
        assert (report.added, report.removed, report.embedded) == (2, 1, 2)
        assert report.count == total + 1
        found = engine.retrieve("freezer alarm sounds twice facilities", 3).docs
        assert found[0].metadata["source"] == "runbooks/extra.md" and found[0].bm25_rank == 1
        old_co500 = knowledge.report.ids_by_code["CO-500"]
        ids = {d.id for d in engine.retrieve("CO-500 ZeroDivisionError checkout", 10).docs}
        assert report.ids_by_code["CO-500"] in ids and old_co500 not in ids
    finally:
        engine.close()
