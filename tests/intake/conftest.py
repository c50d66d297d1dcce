"""Fixtures for the intake tests: the real app with the intake wired, a webhook receiver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from tests.intake.intake_support import Receiver
from tests.support import unique_name

from app.core.config import Settings
from app.main import create_app


@pytest.fixture(scope="module")
def intake_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app per test module with the intake wired; tests use their own fingerprints."""
    settings = Settings(
        state_dir=tmp_path_factory.mktemp("state"),
        collection_name=unique_name("kb"),
        auth="off",
        _env_file=None,  # type: ignore[call-arg]
    )
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A recording webhook receiver on 127.0.0.1."""
    with Receiver() as server:
        yield server
