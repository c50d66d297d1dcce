"""What every state backend provides."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from app.incidents.repository import IncidentRepository
from app.intake.fingerprints import FingerprintStore
from app.intake.outbox import NotificationOutbox


@dataclass
class StateBackend:
    """An open checkpointer, incident repository, alert fingerprints and notification outbox."""

    name: str
    checkpointer: BaseCheckpointSaver[Any]
    repository: IncidentRepository
    connection: Any
    fingerprints: FingerprintStore
    outbox: NotificationOutbox
    #: One round trip to a remote database, for readiness; None for embedded backends.
    ping: Callable[[], Awaitable[None]] | None = None
