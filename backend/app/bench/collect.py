"""``rca bench collect``: collection time per incident against a real, backfilled Prometheus.

The investigation scenarios (``data/eval/investigation``) are staged as the evaluation stages
them (``app.evaluation.investigation.staged``): one real Prometheus backfilled with every
scenario's series, their log files rendered at their incident times. The collector the
settings build -- the object the graph's ``collect`` node runs -- is then timed per incident
side by side with the same collector reading Prometheus only, log files only, and no source
at all (what the node costs when nothing is configured). Run ``i`` collects scenario ``i``
(cycling); each run is a full collection with its own request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from app.bench.common import format_timings, load_average, machine, time_calls
from app.core.config import PROJECT_ROOT, Settings, get_settings
from app.core.errors import ConfigurationError
from app.evaluation.investigation import ReplayCollector, load_scenarios, staged
from app.evidence.sources.collector import EvidenceCollector, build_collector

DEFAULT_SCENARIOS = PROJECT_ROOT / "data/eval/investigation"


def _collectors(settings: Settings, url: str, sources: Path) -> dict[str, EvidenceCollector]:
    """The contenders: both sources, each alone, and none."""
    variants: dict[str, dict[str, Any]] = {
        "prometheus+logs": {"prometheus_url": url, "sources_file": sources},
        "prometheus": {"prometheus_url": url, "sources_file": None},
        "logs": {"prometheus_url": None, "sources_file": sources},
    }
    out: dict[str, EvidenceCollector] = {}
    for name, update in variants.items():
        collector = build_collector(settings.model_copy(update=update))
        if collector is None:
            raise ConfigurationError(f"bench collect: {name} configures no source")
        out[name] = ReplayCollector(collector)
    out["no source"] = EvidenceCollector([])
    return out


def run_collect_bench(
    runs: int = 50,
    warmup: int = 3,
    scenarios_dir: Path = DEFAULT_SCENARIOS,
    base: Settings | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Time one collection per incident for every contender, interleaved.

    Args:
        runs: Timed collections per contender; run ``i`` collects scenario ``i`` (cycling).
        warmup: Untimed rounds first.
        scenarios_dir: The scenario folders.
        base: Settings to start from (default: the configured ones).
        log: Progress goes here.

    Returns:
        ``operations`` (median and p95 ms per contender), ``items`` (mean items collected
        per incident), ``config`` and ``machine``.
    """
    load_before = load_average()
    settings = base or get_settings()
    scenarios = load_scenarios(scenarios_dir)
    log(f"backfilling a real Prometheus with {len(scenarios)} scenarios")
    with staged(scenarios) as stage:
        collectors = _collectors(settings, stage.prometheus_url, stage.sources_file)
        incidents = list(stage.incidents.values())
        loop = asyncio.new_event_loop()
        items: dict[str, list[int]] = {name: [] for name in collectors}
        unavailable: dict[str, int] = dict.fromkeys(collectors, 0)

        def contender(name: str) -> Callable[[int], object]:
            collector = collectors[name]

            def call(i: int) -> None:
                incident = incidents[i % len(incidents)]
                request = collector.request_for(incident, None, datetime.now().astimezone())
                collection = loop.run_until_complete(collector.collect(request))
                items[name].append(len(collection.items))
                unavailable[name] += len(collection.unavailable)

            return call

        log(f"collecting, interleaved ({runs} runs each)")
        try:
            timings = time_calls({n: contender(n) for n in collectors}, runs, warmup)
        finally:
            loop.close()
    return {
        "machine": machine(load_before),
        "config": {"runs": runs, "warmup": warmup, "scenarios": len(scenarios)},
        "operations": {name: asdict(timing) for name, timing in timings.items()},
        "items": {n: round(sum(v) / len(v), 1) if v else 0 for n, v in items.items()},
        "unavailable": unavailable,
    }


def format_collect_bench(result: dict[str, Any]) -> str:
    """The collect bench result as a plain-text table."""
    lines = format_timings("collection", result["operations"])
    items = ", ".join(f"{name} {count}" for name, count in result["items"].items())
    lines.append(f"items per incident: {items}")
    lines.append(
        f"{result['config']['scenarios']} incidents, one real Prometheus (backfilled), "
        f"unavailable-source reports: {sum(result['unavailable'].values())}"
    )
    load = result["machine"]["load_average_1m"]
    lines.append(f"load average (1 min) before/after: {load['before']} / {load['after']}")
    return "\n".join(lines)
