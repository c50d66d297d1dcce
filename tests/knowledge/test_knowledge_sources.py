"""Knowledge sources: folder vs single file, precedence, validation and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers import KNOWLEDGE_PATH
from tests.knowledge.helpers import make_sources

from app.core.config import Settings
from app.core.errors import KnowledgeBaseError
from app.rag.sources import configured_source, load_sources


def test_default_source_is_the_knowledge_folder_with_only_error_docs() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    source = configured_source(settings)
    assert source == settings.knowledge_dir and source.is_dir()
    loaded = load_sources(source)
    assert loaded.files == ["error_docs.txt"]
    assert len(loaded.chunks) == 10


def test_knowledge_path_set_explicitly_wins_over_the_folder(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    only_dir = Settings(knowledge_dir=folder, _env_file=None)  # type: ignore[call-arg]
    assert configured_source(only_dir) == folder
    both = Settings(
        knowledge_dir=folder,
        knowledge_path=KNOWLEDGE_PATH,
        _env_file=None,  # type: ignore[call-arg]
    )
    assert configured_source(both) == KNOWLEDGE_PATH
    assert configured_source(both, override=folder) == folder


def test_knowledge_path_from_the_environment_counts_as_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RCA_KNOWLEDGE_PATH", str(KNOWLEDGE_PATH))
    assert configured_source(Settings(_env_file=None)) == KNOWLEDGE_PATH  # type: ignore[call-arg]


def test_folder_mixes_error_docs_and_runbooks(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    (folder / ".hidden.md").write_text("# Hidden\nnever read\n")
    (folder / "notes.json").write_text("{}")
    loaded = load_sources(folder)
    assert loaded.files == ["error_docs.txt", "runbooks/payments.md", "runbooks/store-network.md"]
    kinds = [c.metadata.get("kind", "error_doc") for c in loaded.chunks]
    assert kinds.count("error_doc") == 10 and kinds.count("runbook") >= 5
    assert len({c.id for c in loaded.chunks}) == len(loaded.chunks)
    assert loaded.warnings == []


def test_duplicates_across_files_are_dropped_with_a_warning(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    (folder / "copy.txt").write_text(KNOWLEDGE_PATH.read_text())
    loaded = load_sources(folder)
    assert len([c for c in loaded.chunks if c.id.startswith("error-doc-")]) == 10
    assert len(loaded.warnings) == 10
    assert all(
        w.startswith("error_docs.txt: a chunk repeats one from copy.txt") for w in loaded.warnings
    )


def test_same_code_in_two_error_doc_files_warns(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    (folder / "more.txt").write_text("Error: PAY-408 PAYMENT_TIMEOUT\nCause: a second opinion.\n")
    loaded = load_sources(folder)
    assert any("PAY-408 is also defined in" in w for w in loaded.warnings)


def test_malformed_entry_names_the_file_and_entry(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    (folder / "bad.txt").write_text("Component: no error line\n")
    with pytest.raises(KnowledgeBaseError) as caught:
        load_sources(folder)
    assert caught.value.message.startswith("bad.txt: entry 1 (line")
    assert str(tmp_path) not in caught.value.message


def test_empty_or_missing_sources_are_refused(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        load_sources(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(KnowledgeBaseError, match="empty knowledge base"):
        load_sources(tmp_path / "empty")
    (tmp_path / "empty" / "blank.txt").write_text("\n---\n")
    with pytest.raises(KnowledgeBaseError, match="empty knowledge base"):
        load_sources(tmp_path / "empty")


def test_a_single_runbook_file_is_a_source(tmp_path: Path) -> None:
    folder = make_sources(tmp_path)
    loaded = load_sources(folder / "runbooks" / "payments.md")
    assert loaded.files == ["payments.md"]
    assert {c.metadata["source"] for c in loaded.chunks} == {"payments.md"}
