"""What the benchmarks share: the settings the in-process ones run on and the memory they use."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from app.core.config import Settings, get_settings


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
