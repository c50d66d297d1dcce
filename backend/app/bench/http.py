"""``rca bench http``: load a real uvicorn process on 127.0.0.1 and measure it.

Starts the service as its own process (rate limiting off, a generated admin key), then drives
``POST /retrieve`` and ``POST /api/incidents`` with 1, 8 and 32 concurrent clients for a bounded
number of requests and time, and reports throughput, p50/p95 latency, errors and the server's
resident memory. Loopback only; every loop stops by itself.

With ``--baseline REF`` a second service runs another commit of this repository (a temporary
``git worktree``) beside this one, and every level is driven against both in turn with the same
bodies: the report gives each row's throughput ratio, current over baseline, measured side by
side on the same machine in the same minutes.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from app.bench.common import rss_mib, service_process
from app.core.config import PROJECT_ROOT
from app.core.errors import ConfigurationError
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
def running_service(
    extra_env: dict[str, str] | None = None, root: Path = PROJECT_ROOT
) -> Iterator[tuple[str, str, int]]:
    """A uvicorn process of ``root``'s code on a free loopback port; (base URL, key, pid)."""
    with tempfile.TemporaryDirectory(prefix="rca-bench-") as state:
        with service_process(Path(state), "admin", extra_env, root) as running:
            yield running


@contextmanager
def baseline_checkout(ref: str) -> Iterator[Path]:
    """Another commit of this repository checked out in a temporary worktree, removed after.

    Raises:
        ConfigurationError: When git is missing or ``ref`` names no commit here.
    """

    def git(*args: str) -> None:
        try:
            subprocess.run(
                ["git", *args], cwd=PROJECT_ROOT, check=True, capture_output=True, text=True
            )
        except FileNotFoundError as exc:
            raise ConfigurationError("--baseline needs git on the PATH") from exc
        except subprocess.CalledProcessError as exc:
            raise ConfigurationError(
                f"git {args[0]} failed for --baseline {ref!r}: {exc.stderr.strip()}"
            ) from exc

    with tempfile.TemporaryDirectory(prefix="rca-baseline-") as parent:
        tree = Path(parent) / "tree"
        git("worktree", "add", "--detach", str(tree), ref)
        try:
            yield tree
        finally:
            git("worktree", "remove", "--force", str(tree))


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
    baseline: str | None = None,
) -> dict[str, Any]:
    """Every (endpoint, concurrency) pair against one fresh service process.

    Args:
        concurrency_levels: Client counts, each driven in turn.
        requests: Requests per level.
        max_seconds: Time cap per level.
        baseline: A git ref whose service is driven right before this one at every level,
            with the same bodies; the result then has ``baseline`` rows and ``ratios``.

    Returns:
        ``{"rows", "server_rss_mib"}``, plus ``{"baseline": {"ref", "rows",
        "server_rss_mib"}, "ratios"}`` with a baseline.
    """
    incidents = sample_incidents()
    queries = [
        {"query": i["message"], "collection_name": "error_docs", "limit": 5} for i in incidents
    ]
    rows: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []
    with ExitStack() as stack:
        old = None
        if baseline is not None:
            tree = stack.enter_context(baseline_checkout(baseline))
            old = stack.enter_context(running_service(root=tree))
        base, key, pid = stack.enter_context(running_service())
        rss_start = rss_mib(pid)
        old_start = rss_mib(old[2]) if old else 0.0
        for endpoint, bodies in (("/retrieve", queries), ("/api/incidents", incidents)):
            for level in concurrency_levels:
                if old is not None:
                    before.append(
                        asyncio.run(
                            drive(old[0], old[1], endpoint, bodies, level, requests, max_seconds)
                        )
                    )
                rows.append(
                    asyncio.run(drive(base, key, endpoint, bodies, level, requests, max_seconds))
                )
        rss_end = rss_mib(pid)
        old_end = rss_mib(old[2]) if old else 0.0
    result: dict[str, Any] = {"rows": rows, "server_rss_mib": {"start": rss_start, "end": rss_end}}
    if baseline is not None:
        result["baseline"] = {
            "ref": baseline,
            "rows": before,
            "server_rss_mib": {"start": old_start, "end": old_end},
        }
        result["ratios"] = [
            {
                "endpoint": now["endpoint"],
                "concurrency": now["concurrency"],
                "throughput_ratio": round(now["throughput_rps"] / then["throughput_rps"], 2)
                if then["throughput_rps"]
                else None,
            }
            for now, then in zip(rows, before, strict=True)
        ]
    return result


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
    baseline = result.get("baseline")
    if baseline:
        lines += ["", f"side by side with {baseline['ref']} (same bodies, driven in turn)"]
        title = f"{'endpoint':<16}{'clients':>8}{'baseline rps':>14}{'rps':>9}{'ratio':>8}"
        lines += [title, "-" * len(title)]
        for now, then, ratio in zip(
            result["rows"], baseline["rows"], result["ratios"], strict=True
        ):
            shown = "-" if ratio["throughput_ratio"] is None else f"{ratio['throughput_ratio']:.2f}"
            lines.append(
                f"{now['endpoint']:<16}{now['concurrency']:>8}{then['throughput_rps']:>14}"
                f"{now['throughput_rps']:>9}{shown:>8}"
            )
    return "\n".join(lines)


def cmd_bench_http(args: Any) -> int:
    """Entry point of ``rca bench http``."""
    levels = tuple(int(v) for v in args.concurrency.split(","))
    result = run_http_bench(levels, args.requests, args.max_seconds, args.baseline)
    print(format_http_bench(result))
    write_json_report(args.json, result)
    rows = [*result["rows"], *result.get("baseline", {}).get("rows", [])]
    errors = sum(row["errors"] for row in rows)
    return 1 if errors else 0


def add_http_parser(kinds: Any) -> None:
    """Register ``rca bench http``."""
    http = kinds.add_parser("http", help="load a real uvicorn on 127.0.0.1 (1/8/32 clients)")
    http.add_argument("--concurrency", default="1,8,32", help="comma-separated client counts")
    http.add_argument("--requests", type=int, default=100, help="requests per level")
    http.add_argument("--max-seconds", type=float, default=120.0, help="time cap per level")
    http.add_argument("--json", metavar="OUT", help="also write every number here")
    http.add_argument(
        "--baseline",
        metavar="REF",
        help="also drive this git ref's service (a temporary worktree), level by level",
    )
    http.set_defaults(handler=cmd_bench_http)
