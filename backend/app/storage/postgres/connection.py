"""How the shared backend connects: the pool type and the settings every connection uses."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

Pool = AsyncConnectionPool[AsyncConnection[DictRow]]

#: Connection settings langgraph's Postgres checkpointer requires (and the index is happy with).
CONNECTION_KWARGS: dict[str, Any] = {
    "autocommit": True,
    "prepare_threshold": 0,
    "row_factory": dict_row,
}
