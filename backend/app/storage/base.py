"""What every state backend provides."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from app.incidents.repository import IncidentRepository


@dataclass
class StateBackend:
    """An open checkpointer and incident repository (plus the raw connection for extras)."""

    name: str
    checkpointer: BaseCheckpointSaver[Any]
    repository: IncidentRepository
    connection: Any
    #: One round trip to a remote database, for readiness; None for embedded backends.
    ping: Callable[[], Awaitable[None]] | None = None
