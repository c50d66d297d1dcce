"""``rca bench graph``: incident -> awaiting review through the compiled graph, and approval.

``open_runtime`` builds what the service builds (knowledge base with the real embedder in an
in-memory Chroma, hybrid engine, extractive generator, citation check, incident history, SQLite
checkpointer and incident index in a temporary folder). Each run then does what
``POST /api/incidents`` and ``POST /api/incidents/{id}/decision`` do, without HTTP:

- ``create_to_review``: ``IncidentService.create`` -- record, redact, run the graph to the
  approval interrupt, index it -- until the incident is ``awaiting_review``;
- ``approve``: ``IncidentService.decide`` with an approval of the oldest pending incident --
  resume the graph, audit, and add the approved RCA to the incident history.

Both are interleaved like the other benches. One incident is created before timing starts, so
an approval that goes first in its round always finds one pending. Approved RCAs accumulate in
the history, which later runs search, as in a running service.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.bench.common import (
    embedded_settings,
    format_footer,
    format_timings,
    load_average,
    machine,
    memory,
    rss_mib,
    time_calls,
)
from app.bench.http import sample_incidents
from app.core.config import Settings
from app.runtime import open_runtime
from app.schemas import (
    DecisionAction,
    DecisionCreate,
    IncidentCreate,
    IncidentPublic,
    IncidentStatus,
)

APPROVAL = DecisionCreate(action=DecisionAction.APPROVE, reviewer="bench", comment="bench")


async def _measure(
    settings: Settings, bodies: list[IncidentCreate], runs: int, warmup: int
) -> dict[str, Any]:
    """Open the runtime, then time both operations from a worker thread on this loop."""
    rss_start = rss_mib()
    async with open_runtime(settings) as runtime:
        rss_ready = rss_mib()
        service = runtime.incidents
        loop = asyncio.get_running_loop()
        pending: deque[str] = deque()
        counts = {"created": 0, "approved": 0}

        def call(work: Coroutine[Any, Any, IncidentPublic], expected: IncidentStatus) -> str:
            incident = asyncio.run_coroutine_threadsafe(work, loop).result()
            if incident.status is not expected:
                raise RuntimeError(f"incident {incident.id} is {incident.status}, not {expected}")
            return incident.id

        def create(_: int) -> None:
            # Every call, warm-up included, reports the next incident: a timed run never
            # repeats a warm-up incident (whose query vector the embedder would still hold).
            body = bodies[counts["created"] % len(bodies)]
            pending.append(call(service.create(body), IncidentStatus.AWAITING_REVIEW))
            counts["created"] += 1

        def approve(_: int) -> None:
            incident_id = pending.popleft()
            call(service.decide(incident_id, APPROVAL, "bench"), IncidentStatus.APPROVED)
            counts["approved"] += 1

        await asyncio.to_thread(create, 0)
        calls = {"create_to_review": create, "approve": approve}
        # time_calls is synchronous; it runs in a thread so the service's coroutines keep
        # running on this loop, where the database connections live.
        timings = await asyncio.to_thread(time_calls, calls, runs, warmup)
    return {
        "operations": {name: asdict(timing) for name, timing in timings.items()},
        "counts": {**counts, "pending": len(pending)},
        "rss_mib": memory(start=rss_start, ready=rss_ready),
    }


def run_graph_bench(
    runs: int = 100,
    warmup: int = 20,
    base: Settings | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Time create-to-awaiting-review and approval through the real service and graph.

    Args:
        runs: Timed incidents (and approvals); each create reports the next eval incident
            (cycling only when the eval set is shorter than warm-up plus runs).
        warmup: Untimed rounds first (20: every shipped doc has been cited once, so its
            sentences are embedded, as in a service that has been running).
        base: Settings to start from (default: the configured ones); see ``embedded_settings``.
        log: Progress goes here.

    Returns:
        ``operations`` (median and p95 ms), ``counts`` of created / approved / pending
        incidents, ``config``, ``machine`` and ``rss_mib``.

    Raises:
        RuntimeError: An incident did not reach ``awaiting_review``, or an approval did not
            leave it ``approved``.
    """
    load_before = load_average()
    bodies = [IncidentCreate.model_validate(i) for i in sample_incidents(limit=runs + warmup + 1)]
    log(f"incident -> awaiting_review and approve, interleaved ({runs} runs each)")
    with tempfile.TemporaryDirectory(prefix="rca-bench-graph-") as state:
        settings = embedded_settings(base, state_dir=Path(state))
        measured = asyncio.run(_measure(settings, bodies, runs, warmup))
    return {
        "machine": machine(load_before),
        "config": {
            "runs": runs,
            "warmup": warmup,
            "incidents": len(bodies),
            "generator": settings.llm,
            "state": "sqlite (temporary folder)",
        },
        **measured,
    }


def format_graph_bench(result: dict[str, Any]) -> str:
    """The graph bench result as a plain-text table.

    Args:
        result: The output of ``run_graph_bench``.

    Returns:
        Printable text.
    """
    lines = format_timings("operation", result["operations"])
    counts, config = result["counts"], result["config"]
    lines.append(
        f"{counts['created']} incidents created, {counts['approved']} approved "
        f"({config['incidents']} distinct, {config['generator']} generator, {config['state']})"
    )
    lines += format_footer(result)
    return "\n".join(lines)
