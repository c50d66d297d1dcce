"""``rca bench inbox``: the first inbox page with thousands of incidents in the store.

Fills a fresh state directory with ``--incidents`` index rows through the product's own
repository (the list reads only the index, so rows need no graph run: seeding 5,000 full
analyses would take longer than the measurement), starts a real uvicorn on it and measures:

- the API: ``GET /api/incidents`` as the inbox asks for its first page (the queue, newest
  first, 50 rows), and the same with a search and grouped, p50 and p95 over ``--runs``;
- the browser: time from navigation to the first inbox row in headless Chromium (Python
  Playwright and Debian's ``/usr/bin/chromium``; skipped with the reason when either is
  missing), p50 over ``--renders`` fresh pages.

Numbers are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from app.bench.common import service_process
from app.bench.http import percentile
from app.core.config import Settings

DEFAULT_CHROMIUM = Path("/usr/bin/chromium")
#: (status, share of the seeded rows).
STATUS_MIX = (("awaiting_review", 0.4), ("approved", 0.45), ("rejected", 0.1), ("failed", 0.05))
FAMILIES = (
    ("CO-500", "checkout-service", "ZeroDivisionError while calculating checkout discount"),
    ("POS-422-QTY", "pos-api", "sale rejected: quantity must be greater than 0"),
    ("PAY-504", "payment-gateway", "card payment timed out waiting for the provider"),
    ("INV-409", "inventory", "stock reservation conflict on sku"),
    ("AUTH-401", "auth-service", "token validation failed for the session"),
)


def seeded_rows(count: int, now: datetime) -> Iterator[dict[str, Any]]:
    """``count`` index rows, one a minute back from ``now``, mixed statuses and families."""
    bounds = []
    total = 0.0
    for status, share in STATUS_MIX:
        total += share
        bounds.append((total, status))
    for n in range(count):
        code, service, message = FAMILIES[n % len(FAMILIES)]
        status = next(s for bound, s in bounds if (n % 100) / 100 < bound)
        created = (now - timedelta(minutes=count - n)).isoformat()
        yield {
            "id": f"bench-{n:06d}",
            "status": status,
            "error_code": code,
            "service": service,
            "event": code.replace("-", "_"),
            "message": f"{message} (store {n % 37}, request {n})",
            "confidence": ("high", "medium", "low")[n % 3],
            "summary": f"{service} reported {code}: {message}",
            "decided_by": "bench" if status in ("approved", "rejected") else None,
            "family": code,
            "group_key": f"family:{code}:{service}:{n // 25}",
            "created_at": created,
            "updated_at": created,
        }


async def _seed(state_dir: Path, count: int) -> float:
    from app.runtime import open_state_backend

    settings = Settings(state_dir=state_dir, auth="off", _env_file=None)
    started = time.perf_counter()
    async with open_state_backend(settings) as backend:
        for row in seeded_rows(count, datetime.now(UTC)):
            await backend.repository.insert(row)
    return time.perf_counter() - started


@contextmanager
def serving(state_dir: Path) -> Iterator[tuple[str, str]]:
    """A uvicorn process over ``state_dir`` on a free loopback port; (base URL, reviewer key)."""
    with service_process(state_dir, "reviewer") as (base, key, _pid):
        yield base, key


#: The requests timed: what the inbox asks for first, then a search and the grouped view.
API_CASES: dict[str, dict[str, str | int]] = {
    "first page": {"status": "awaiting_review", "sort": "newest", "limit": 50},
    "search": {"status": "awaiting_review", "q": "checkout discount", "limit": 50},
    "grouped": {"status": "awaiting_review", "grouped": "true", "limit": 50},
}


def time_api(base: str, key: str, runs: int) -> dict[str, dict[str, float]]:
    """p50/p95 (ms) of each API case, the cases interleaved run by run."""
    samples: dict[str, list[float]] = {name: [] for name in API_CASES}
    with httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=60) as http:
        for params in API_CASES.values():  # warm-up
            http.get("/api/incidents", params=params).raise_for_status()
        for _ in range(runs):
            for name, params in API_CASES.items():
                started = time.perf_counter()
                http.get("/api/incidents", params=params).raise_for_status()
                samples[name].append((time.perf_counter() - started) * 1000)
    return {
        name: {"p50_ms": round(percentile(v, 50), 1), "p95_ms": round(percentile(v, 95), 1)}
        for name, v in samples.items()
    }


def time_render(base: str, key: str, renders: int, chromium: Path) -> dict[str, Any]:
    """Navigation to the first inbox row in headless Chromium, p50 over fresh pages."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "Python Playwright is not installed"}
    if not chromium.exists():
        return {"skipped": f"no Chromium at {chromium}"}
    samples = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            for _ in range(renders + 1):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(f"localStorage.setItem('rca.apiKey', {key!r})")
                page = context.new_page()
                started = time.perf_counter()
                page.goto(f"{base}/")
                page.wait_for_selector("a.inbox-item")
                samples.append((time.perf_counter() - started) * 1000)
                context.close()
        finally:
            browser.close()
    timed = samples[1:]  # the first page warms the browser's caches
    return {"renders": len(timed), "p50_ms": round(percentile(timed, 50), 1)}


def run_inbox_bench(
    incidents: int = 5000, runs: int = 50, renders: int = 5, chromium: Path = DEFAULT_CHROMIUM
) -> dict[str, Any]:
    """Seed, serve, time the API and the first render."""
    with tempfile.TemporaryDirectory(prefix="rca-bench-inbox-") as state:
        seconds = asyncio.run(_seed(Path(state), incidents))
        with serving(Path(state)) as (base, key):
            api = time_api(base, key, runs)
            render = time_render(base, key, renders, chromium)
    return {
        "incidents": incidents,
        "seed_seconds": round(seconds, 1),
        "api": api,
        "first_render": render,
    }


def format_inbox_bench(result: dict[str, Any]) -> str:
    """The API table and the render line."""
    lines = [
        f"{result['incidents']} incidents in the store (seeded in {result['seed_seconds']} s)",
        f"{'GET /api/incidents':<22}{'p50 ms':>10}{'p95 ms':>10}",
    ]
    for name, timing in result["api"].items():
        lines.append(f"{name:<22}{timing['p50_ms']:>10}{timing['p95_ms']:>10}")
    render = result["first_render"]
    if "skipped" in render:
        lines.append(f"first render: skipped ({render['skipped']})")
    else:
        lines.append(
            f"first render in Chromium (navigation to the first row): p50 {render['p50_ms']} ms "
            f"over {render['renders']} fresh pages"
        )
    return "\n".join(lines)
