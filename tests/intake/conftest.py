"""Fixtures for the intake tests: a webhook receiver (the app is the shared_client fixture)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.intake.helpers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A recording webhook receiver on 127.0.0.1."""
    with Receiver() as server:
        yield server
