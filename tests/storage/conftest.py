"""Real PostgreSQL and Redis for the storage tests: a fresh database per test, skip or fail.

PostgreSQL and Redis are expected on 127.0.0.1 (override with ``RCA_TEST_POSTGRES_URL`` — an
admin connection to an existing database — and ``RCA_TEST_REDIS_URL``). When one is
unreachable the tests that need it skip with the reason; with ``CI=true`` they fail instead,
because CI machines run both services.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import aiosqlite
import psycopg
import pytest
from psycopg import sql
from tests.helpers import skip_or_fail

from app.incidents.repository import IncidentRepository
from app.storage.base import StateBackend
from app.storage.postgres.backend import open_postgres_backend
from app.storage.sqlite.backend import open_sqlite_backend
from app.storage.sqlite.incidents import SqliteIncidentRepository

ADMIN_URL = os.environ.get("RCA_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("RCA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def require_service(name: str, url: str, default_port: int) -> str:
    """Return ``url`` when a TCP connection to its host and port opens; skip, or fail on CI.

    Args:
        name: What the service is, for the message.
        url: Its URL.
        default_port: The port to try when the URL names none.

    Returns:
        The same URL, for chaining.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or default_port
    try:
        with socket.create_connection((host, port), timeout=3):
            return url
    except OSError as exc:
        skip_or_fail(f"{name} is not reachable at {host}:{port} ({exc})")


def with_database(url: str, database: str) -> str:
    """``url`` pointing at another database on the same server."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


@contextmanager
def fresh_database(prefix: str = "rca_test") -> Iterator[str]:
    """Create a uniquely named database, yield its URL, drop it (and its sessions) after."""
    admin_url = require_service("PostgreSQL", ADMIN_URL, 5432)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty database for this test only."""
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def module_postgres_url() -> Iterator[str]:
    """A fresh database shared by one module's tests (for servers started once per module)."""
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="module")
def redis_url() -> str:
    """The Redis server the shared rate limiter uses."""
    return require_service("Redis", REDIS_URL, 6379)


@pytest.fixture
async def pg_backend(postgres_url: str) -> AsyncIterator[StateBackend]:
    """The PostgreSQL backend, opened on a fresh database."""
    async with open_postgres_backend(postgres_url, max_size=4) as backend:
        yield backend


@pytest.fixture
async def two_workers(postgres_url: str) -> AsyncIterator[tuple[StateBackend, StateBackend]]:
    """Two backends on one fresh database, opened concurrently, as two workers starting."""
    async with AsyncExitStack() as stack:
        first, second = await asyncio.gather(
            stack.enter_async_context(open_postgres_backend(postgres_url, max_size=4)),
            stack.enter_async_context(open_postgres_backend(postgres_url, max_size=4)),
        )
        yield first, second


@pytest.fixture(params=["sqlite", "postgres"])
async def state(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StateBackend]:
    """Each state backend, empty, for the contract tests of what they share."""
    if request.param == "sqlite":
        async with open_sqlite_backend(tmp_path / "rca.sqlite") as sqlite:
            yield sqlite
        return
    with fresh_database() as url:
        async with open_postgres_backend(url, max_size=4) as postgres:
            yield postgres


@pytest.fixture(params=["sqlite", "postgres"])
async def repository(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[IncidentRepository]:
    """Each implementation of ``IncidentRepository``, empty, for the contract tests."""
    if request.param == "sqlite":
        async with aiosqlite.connect(tmp_path / "index.sqlite") as db:
            sqlite = SqliteIncidentRepository(db)
            await sqlite.setup()
            yield sqlite
        return
    with fresh_database() as url:
        async with open_postgres_backend(url, max_size=4) as backend:
            yield backend.repository
