"""Shared fixtures: the real embedder, unique Chroma collections, a temp state dir, the app."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.helpers import KNOWLEDGE_PATH, unique_name

from app.core.config import Settings
from app.main import create_app
from app.rag.embedding import MiniLmEmbedder, default_embedder
from app.rag.knowledge import KnowledgeBase, build_knowledge_base


@pytest.fixture(scope="session")
def embedder() -> MiniLmEmbedder:
    """The real embedder (one ONNX session for the whole run)."""
    return default_embedder()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Embedded defaults with a private state dir and collection."""
    return Settings(
        state_dir=tmp_path / "state",
        collection_name=unique_name("kb"),
        knowledge_path=KNOWLEDGE_PATH,
        auth="off",
        _env_file=None,  # type: ignore[call-arg]
    )


@pytest.fixture(scope="session")
def knowledge(embedder: MiniLmEmbedder) -> KnowledgeBase:
    """The real knowledge base in its own collection, shared read-only across tests."""
    settings = Settings(collection_name=unique_name("kb"), _env_file=None)  # type: ignore[call-arg]
    return build_knowledge_base(settings, embedder)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A fresh app (own state dir) through its real lifespan."""
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app per test module, for tests that only touch incidents they create."""
    settings = Settings(
        state_dir=tmp_path_factory.mktemp("state"),
        collection_name=unique_name("kb"),
        auth="off",
        _env_file=None,  # type: ignore[call-arg]
    )
    with TestClient(create_app(settings)) as test_client:
        yield test_client
