"""Fixtures for the knowledge-lifecycle tests: a real Chroma server."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from tests.knowledge.helpers import ChromaServer


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """``chroma run`` on a free 127.0.0.1 port; skipped if it cannot start (failed on CI)."""
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data")
    try:
        server.start()
    except (RuntimeError, OSError) as exc:
        reason = f"cannot start a Chroma server: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    try:
        yield server
    finally:
        server.stop()
