"""Prometheus metrics of the service (one process-wide registry)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

from prometheus_client import Counter, Gauge, Histogram

REQUEST_LATENCY = Histogram(
    "rca_http_request_duration_seconds",
    "HTTP request latency by route template, method and status.",
    ["method", "route", "status"],
)
NODE_LATENCY = Histogram("rca_graph_node_duration_seconds", "Latency of each graph node.", ["node"])
LOW_CONFIDENCE = Counter(
    "rca_retrieval_low_confidence_total", "Retrievals where nothing survived the gates."
)
LLM_FALLBACKS = Counter(
    "rca_llm_fallback_total", "RCA drafts where the LLM path failed open to extractive."
)
REVIEWS_PENDING = Gauge("rca_reviews_pending", "Incidents awaiting a reviewer's decision.")

T = TypeVar("T")


def timed_node(name: str, node: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a sync or async graph node so its latency is observed."""
    import inspect

    if inspect.iscoroutinefunction(node) or inspect.iscoroutinefunction(
        getattr(node, "func", None)
    ):

        @wraps(node)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                result: Awaitable[Any] = node(*args, **kwargs)
                return await result
            finally:
                NODE_LATENCY.labels(name).observe(time.perf_counter() - start)

        return timed_async

    @wraps(node)
    def timed_sync(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return node(*args, **kwargs)
        finally:
            NODE_LATENCY.labels(name).observe(time.perf_counter() - start)

    return timed_sync
