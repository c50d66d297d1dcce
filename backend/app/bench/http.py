"""``rca bench http``: load a real uvicorn process on 127.0.0.1 and measure it.

Starts the service as its own process (rate limiting off, a generated admin key), then drives
``POST /retrieve`` and ``POST /api/incidents`` with 1, 8 and 32 concurrent clients for a bounded
number of requests and time, and reports throughput, p50/p95 latency, errors and the server's
resident memory. Loopback only; every loop stops by itself.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from app.bench.common import rss_mib, service_process
from app.core.config import PROJECT_ROOT
from app.core.reports import write_json_report

EVAL_CASES = PROJECT_ROOT / "data" / "eval" / "incidents.jsonl"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def sample_incidents(limit: int = 40) -> list[dict[str, Any]]:
    """Incident bodies from the domain eval set (varied, realistic)."""
    cases = [json.loads(line) for line in EVAL_CASES.read_text().splitlines() if line.strip()]
    return [c["incident"] for c in cases[:limit]]


@contextmanager
def running_service(extra_env: dict[str, str] | None = None) -> Iterator[tuple[str, str, int]]:
    """A uvicorn process on a free loopback port; yields (base URL, admin key, pid)."""
    with tempfile.TemporaryDirectory(prefix="rca-bench-") as state:
        with service_process(Path(state), "admin", extra_env) as running:
            yield running


async def drive(
    base: str,
    key: str,
    endpoint: str,
    bodies: list[dict[str, Any]],
    concurrency: int,
    requests: int,
    max_seconds: float,
) -> dict[str, Any]:
    """``concurrency`` clients share ``requests`` calls; stop early after ``max_seconds``."""
    latencies: list[float] = []
    errors = 0
    issued = 0
    stop_at = time.monotonic() + max_seconds
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=base, headers={"X-API-Key": key}, timeout=120, limits=limits
    ) as client:

        async def worker() -> None:
            nonlocal issued, errors
            while issued < requests and time.monotonic() < stop_at:
                body = bodies[issued % len(bodies)]
                issued += 1
                start = time.perf_counter()
                try:
                    response = await client.post(endpoint, json=body)
                    ok = response.status_code < 400
                except httpx.HTTPError:
                    ok = False
                latencies.append(time.perf_counter() - start)
                errors += 0 if ok else 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return {
        "endpoint": endpoint,
        "concurrency": concurrency,
        "requests": len(latencies),
        "errors": errors,
        "seconds": round(wall, 3),
        "throughput_rps": round(len(latencies) / wall, 2) if wall else 0.0,
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 95) * 1000, 1),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 1) if latencies else 0.0,
    }


def run_http_bench(
    concurrency_levels: tuple[int, ...] = (1, 8, 32),
    requests: int = 100,
    max_seconds: float = 120.0,
) -> dict[str, Any]:
    """Every (endpoint, concurrency) pair against one fresh service process."""
    incidents = sample_incidents()
    queries = [
        {"query": i["message"], "collection_name": "error_docs", "limit": 5} for i in incidents
    ]
    rows: list[dict[str, Any]] = []
    with running_service() as (base, key, pid):
        rss_start = rss_mib(pid)
        for endpoint, bodies in (("/retrieve", queries), ("/api/incidents", incidents)):
            for level in concurrency_levels:
                rows.append(
                    asyncio.run(drive(base, key, endpoint, bodies, level, requests, max_seconds))
                )
        rss_end = rss_mib(pid)
    return {"rows": rows, "server_rss_mib": {"start": rss_start, "end": rss_end}}


def format_http_bench(result: dict[str, Any]) -> str:
    """A plain table of the rows plus the memory line."""
    header = (
        f"{'endpoint':<16}{'clients':>8}{'requests':>10}{'errors':>8}{'rps':>9}"
        f"{'p50 ms':>10}{'p95 ms':>10}"
    )
    lines = [header, "-" * len(header)]
    for row in result["rows"]:
        lines.append(
            f"{row['endpoint']:<16}{row['concurrency']:>8}{row['requests']:>10}{row['errors']:>8}"
            f"{row['throughput_rps']:>9}{row['p50_ms']:>10}{row['p95_ms']:>10}"
        )
    rss = result["server_rss_mib"]
    lines.append(f"server RSS: {rss['start']:.0f} MiB at start, {rss['end']:.0f} MiB at the end")
    return "\n".join(lines)


def cmd_bench_http(args: Any) -> int:
    """Entry point of ``rca bench http``."""
    levels = tuple(int(v) for v in args.concurrency.split(","))
    result = run_http_bench(levels, args.requests, args.max_seconds)
    print(format_http_bench(result))
    write_json_report(args.json, result)
    errors = sum(row["errors"] for row in result["rows"])
    return 1 if errors else 0


def add_http_parser(kinds: Any) -> None:
    """Register ``rca bench http``."""
    http = kinds.add_parser("http", help="load a real uvicorn on 127.0.0.1 (1/8/32 clients)")
    http.add_argument("--concurrency", default="1,8,32", help="comma-separated client counts")
    http.add_argument("--requests", type=int, default=100, help="requests per level")
    http.add_argument("--max-seconds", type=float, default=120.0, help="time cap per level")
    http.add_argument("--json", metavar="OUT", help="also write every number here")
    http.set_defaults(handler=cmd_bench_http)
