"""Many incidents for the UI's scale tests, created through the incident service in-process.

The service runs the real graph over the server's own state file (so every seeded incident has
its checkpoints, index row and audit trail), with a retriever that always returns one
checkout doc: the whole pipeline minus the embedding work that makes a create slow. Seeding
runs before the server starts, so its start-up recovery finds nothing in flight.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.fakes import StaticRetriever, ranked_doc

from app.core.config import Settings
from app.graph.deps import GraphDeps
from app.graph.graph import build_graph
from app.incidents.service import IncidentService
from app.rca.extractive import ExtractiveGenerator
from app.runtime import open_state_backend
from app.schemas import IncidentCreate

CHECKOUT_DOC = (
    "Error: CO-500 CHECKOUT_SERVICE_CRASH\n"
    "Service: checkout-service\n"
    "Symptoms: /checkout returns HTTP 500; the logs show a ZeroDivisionError traceback.\n"
    "Cause: the discount calculation divides by the item count of an empty basket.\n"
)


def seeded_incident(n: int, services: int) -> dict[str, Any]:
    """Incident ``n``: a unique word (``batchNNN``), one shared by every 7th (``tenantK``)."""
    return {
        "error_code": "CO-500",
        "message": f"ZeroDivisionError in checkout batch{n:03d} for tenant{n % 7}",
        "service": f"checkout-{n % services}",
    }


async def _seed(state_dir: Path, count: int, services: int) -> list[str]:
    settings = Settings(state_dir=state_dir, auth="off", _env_file=None)  # type: ignore[call-arg]
    doc = ranked_doc("error-doc-seeded", CHECKOUT_DOC, {"error_code": "CO-500"}, similarity=0.8)
    deps = GraphDeps(
        retriever=StaticRetriever([doc], low_confidence=False),
        generator=ExtractiveGenerator(),
        knowledge_version=lambda: "seeded",
    )
    ids = []
    async with open_state_backend(settings) as backend:
        service = IncidentService(build_graph(deps, backend.checkpointer), backend.repository)
        for n in range(count):
            created = await service.create(IncidentCreate(**seeded_incident(n, services)))
            ids.append(created.id)
    return ids


def seed(state_dir: Path, count: int, services: int) -> list[str]:
    """Create ``count`` incidents (oldest first) over ``services`` services; their ids."""
    # A thread of its own: the test session may already run an event loop on this one.
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, _seed(state_dir, count, services)).result()
