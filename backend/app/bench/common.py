"""What the benchmarks share: side-by-side timing, inputs, settings, memory and report lines."""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from app.core.config import PROJECT_ROOT, Settings, get_settings
from app.core.processes import free_port, stop_process

DEFAULT_MODELS_DIR = PROJECT_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2"
DEFAULT_SCIFACT_DIR = PROJECT_ROOT.parent / "shared" / "datasets" / "scifact"


@dataclass(frozen=True)
class Timing:
    """Latency of repeated calls in milliseconds."""

    runs: int
    median_ms: float
    p95_ms: float


@dataclass(frozen=True)
class Throughput:
    """Documents embedded per second over one pass."""

    docs: int
    seconds: float
    docs_per_s: float


def _rotated(names: Sequence[str], round_index: int) -> list[str]:
    shift = round_index % len(names)
    return [*names[shift:], *names[:shift]]


def time_calls(
    calls: Mapping[str, Callable[[int], object]], runs: int, warmup: int = 3
) -> dict[str, Timing]:
    """Time several operations side by side: each run calls every one of them once.

    Interleaving (and rotating who goes first) exposes every contender to the same machine
    load; timing them one after another would let a busy minute favour whoever ran later.

    Args:
        calls: Name to operation; each receives the run index (to pick an input).
        runs: Timed calls of each operation.
        warmup: Untimed rounds first (session start-up, allocator growth).

    Returns:
        Name to median and 95th percentile in milliseconds.
    """
    names = list(calls)
    for i in range(warmup):
        for name in names:
            calls[name](i)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        for name in _rotated(names, i):
            started = time.perf_counter()
            calls[name](i)
            samples[name].append((time.perf_counter() - started) * 1000)
    return {
        name: Timing(
            runs=runs,
            median_ms=round(statistics.median(values), 3),
            p95_ms=round(float(np.percentile(values, 95)), 3),
        )
        for name, values in samples.items()
        if values
    }


def time_passes(
    embedders: Mapping[str, Callable[[list[str]], object]],
    texts: list[str],
    chunk: int,
) -> dict[str, Throughput]:
    """Documents per second of several embedders over the same texts, interleaved by chunk.

    Each chunk of ``chunk`` texts (whole batches) is embedded by every embedder in turn, so
    they share the machine's load; an embedder that sorts by length sorts within the chunk.

    Args:
        embedders: Name to a function embedding a list of texts.
        texts: The documents.
        chunk: Texts per round.

    Returns:
        Name to throughput over all of ``texts``.
    """
    names = list(embedders)
    for name in names:
        embedders[name](texts[:2])
    seconds = dict.fromkeys(names, 0.0)
    for round_index, offset in enumerate(range(0, len(texts), chunk)):
        part = texts[offset : offset + chunk]
        for name in _rotated(names, round_index):
            started = time.perf_counter()
            embedders[name](part)
            seconds[name] += time.perf_counter() - started
    return {
        name: Throughput(len(texts), round(total, 3), round(len(texts) / max(total, 1e-9), 2))
        for name, total in seconds.items()
    }


def scifact_docs(folder: Path, count: int) -> list[str]:
    """The first ``count`` SciFact abstracts as ``title + " " + text``.

    Args:
        folder: The BEIR SciFact folder.
        count: How many.

    Returns:
        The documents in file order.
    """
    docs: list[str] = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if len(docs) >= count:
                break
            row = json.loads(line)
            docs.append(f"{row.get('title') or ''} {row.get('text') or ''}".strip())
    return docs


def _status_mib(pid: int | str, key: str) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def rss_mib(pid: int | None = None) -> float | None:
    """Resident memory of a process (default: this one) in MiB (Linux), or None."""
    return _status_mib("self" if pid is None else pid, "VmRSS")


def peak_rss_mib() -> float | None:
    """The highest resident memory this process has had, in MiB (Linux), or None."""
    return _status_mib("self", "VmHWM")


def memory(**earlier: float | None) -> dict[str, float | None]:
    """The ``rss_mib`` block of a bench result: ``earlier`` readings, then now and the peak.

    Args:
        **earlier: Readings taken before, by name (``start``, ``ready``).

    Returns:
        ``{**earlier, "end", "peak"}`` in MiB.
    """
    return {**earlier, "end": rss_mib(), "peak": peak_rss_mib()}


def format_rss(rss: dict[str, float | None]) -> str:
    """One line naming every memory reading, e.g. ``process RSS (MiB): start 310, end 402``."""
    readings = ", ".join(f"{name} {'-' if v is None else f'{v:.0f}'}" for name, v in rss.items())
    return f"process RSS (MiB): {readings}"


def load_average() -> float | None:
    """The machine's 1-minute load average, or None where the platform has none.

    Other processes competing for the cores skew every timing; benches record how busy it was.
    """
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def machine(load_before: float | None, **details: Any) -> dict[str, Any]:
    """The ``machine`` block of a bench result: cores, extra ``details``, load before/after.

    Args:
        load_before: ``load_average()`` taken when the bench started.
        **details: More facts to record (versions, processor).

    Returns:
        ``{"cpus", **details, "load_average_1m": {"before", "after"}}``.
    """
    return {
        "cpus": os.cpu_count(),
        **details,
        # Other processes competing for the cores skew every number; record how busy it was.
        "load_average_1m": {"before": load_before, "after": load_average()},
    }


def format_timings(label: str, timings: dict[str, dict[str, Any]], width: int = 18) -> list[str]:
    """Table lines ``name  runs  median ms  p95 ms`` for ``Timing`` dicts, header first.

    Args:
        label: The first column's heading.
        timings: Name to ``{"runs", "median_ms", "p95_ms"}``.
        width: The first column's width.

    Returns:
        The lines.
    """
    lines = [f"{label:<{width}}{'runs':>6}{'median ms':>12}{'p95 ms':>10}"]
    for name, t in timings.items():
        lines.append(f"{name:<{width}}{t['runs']:>6}{t['median_ms']:>12.2f}{t['p95_ms']:>10.2f}")
    return lines


def format_load(load: dict[str, float | None]) -> str:
    """The machine's 1-minute load average before and after, as one line."""
    return f"load average (1 min) before/after: {load['before']} / {load['after']}"


def format_footer(result: Mapping[str, Any]) -> list[str]:
    """The closing lines of an in-process bench's table: its memory and the machine's load."""
    return [format_rss(result["rss_mib"]), format_load(result["machine"]["load_average_1m"])]


def embedded_settings(base: Settings | None = None, state_dir: Path | None = None) -> Settings:
    """``base`` on the embedded defaults that the in-process benchmarks measure.

    In-memory Chroma in a private collection, SQLite state in ``state_dir``, the extractive
    generator, no reranker and no webhook: every number comes from this process alone. The
    retrieval knobs (fusion, floor, candidates, batch size) stay as configured.

    Args:
        base: The settings to start from (default: the configured ones).
        state_dir: Where the SQLite state goes (default: unchanged).

    Returns:
        A copy of ``base`` with those fields replaced.
    """
    update: dict[str, Any] = {
        "chroma_url": None,
        "chroma_path": None,
        "database_url": None,
        "llm": "extractive",
        "rerank_url": None,
        "notify_webhook_url": None,
        "collection_name": f"bench-{uuid.uuid4().hex[:10]}",
        "history_collection_name": None,
    }
    if state_dir is not None:
        update["state_dir"] = state_dir
    return (base or get_settings()).model_copy(update=update)


@contextmanager
def service_process(
    state_dir: Path,
    role: str,
    extra_env: Mapping[str, str] | None = None,
    root: Path = PROJECT_ROOT,
) -> Iterator[tuple[str, str, int]]:
    """The product's uvicorn process over ``state_dir`` on a free loopback port.

    Args:
        state_dir: The state directory the service opens.
        role: The role of the one API key the service is given (``admin``, ``reviewer`` …).
        extra_env: More ``RCA_`` settings for the process.
        root: The checkout whose code and data the process runs (another commit's worktree
            for a side-by-side baseline).

    Yields:
        The base URL, the API key and the process id.
    """
    key = secrets.token_urlsafe(24)
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(root / "backend"),
        "RCA_STATE_DIR": str(state_dir),
        "RCA_API_KEYS": f"{role}:{key}:bench",
        "RCA_RATE_LIMIT_PER_MINUTE": "0",
        "RCA_LOG_LEVEL": "WARNING",
        **(extra_env or {}),
    }
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=root, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError("the service exited during start-up")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise RuntimeError("the service did not start within 300 s")
        yield base, key, process.pid
    finally:
        stop_process(process)
