"""PostgreSQL going away under a running service: 503 in the envelope, then back to normal.

The database is really unreachable for the service: its sessions are terminated and the
server refuses new connections to that database (``ALLOW_CONNECTIONS false``), as it does for
a database being restored or a server shutting down. Nothing else on the shared server is
touched, and the service is not restarted when the database comes back.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient
from psycopg import sql
from tests.helpers import make_settings
from tests.storage.conftest import ADMIN_URL, fresh_database

from app.main import create_app
from app.sample_app import crash_checkout


@pytest.fixture
def database() -> Iterator[tuple[str, str]]:
    with fresh_database("rca_down") as url:
        yield url, url.rsplit("/", 1)[1]


def set_reachable(name: str, reachable: bool) -> None:
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                sql.Identifier(name), sql.SQL("true" if reachable else "false")
            )
        )
        if not reachable:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )


def test_writes_get_503_while_postgres_is_down_and_work_again_after(
    tmp_path: Path, database: tuple[str, str]
) -> None:
    url, name = database
    settings = make_settings(tmp_path / "state", database_url=url)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert client.post("/api/incidents", json=crash_checkout()).status_code == 201
        set_reachable(name, False)
        try:
            started = time.monotonic()
            down = client.post("/api/incidents", json=crash_checkout())
            waited = time.monotonic() - started
            assert down.status_code == 503, down.text
            assert down.json()["error"]["code"] == "upstream_unavailable"
            assert down.headers["Retry-After"] == "5"
            assert "Traceback" not in down.text and "psycopg" not in down.text
            assert waited < settings.database_timeout_seconds + 5
            assert client.get("/api/incidents").status_code == 503
        finally:
            set_reachable(name, True)
        # The pool replaces its dead connections on its own: no restart.
        deadline = time.monotonic() + 30
        while (again := client.post("/api/incidents", json=crash_checkout())).status_code == 503:
            assert time.monotonic() < deadline, again.text
            time.sleep(0.5)
        assert again.status_code == 201, again.text
        listing = client.get("/api/incidents").json()
        # The create that failed while the database was down left nothing behind.
        assert listing["total"] == 2
        assert {i["status"] for i in listing["items"]} == {"awaiting_review"}


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
