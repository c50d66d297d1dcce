"""The real knowledge base's entries, by error code, for the diagnosis tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.rag.ingest import KnowledgeChunk, load_error_docs

KNOWLEDGE = Path(__file__).resolve().parents[2] / "data" / "knowledge" / "error_docs.txt"


@pytest.fixture(scope="module")
def chunks() -> dict[str, KnowledgeChunk]:
    return {str(c.metadata["error_code"]): c for c in load_error_docs(KNOWLEDGE).chunks}
