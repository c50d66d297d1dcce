"""Query rewrite and multi-query expansion, best effort.

With a chat model configured, the model rewrites the query for retrieval and adds paraphrases;
the engine searches with every query and fuses all rankings with RRF. The original query is always
first, so expansion can add recall but never lose the user's own words. The rewrite is fail-open:
a timeout, an error or an empty answer leaves just the original query (and a note saying why).
The default is no rewriter: the extractive configuration runs without any LLM.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from app.core.config import Settings

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 5.0
DEFAULT_MAX_VARIANTS = 3

REWRITE_SYSTEM_PROMPT = (
    "You turn incident reports into search queries for a knowledge base of error documentation. "
    "Reply with at most {n} lines and nothing else: first the report rewritten as one concise "
    "search query, then paraphrases that use different words for the same problem. Keep error "
    "codes, status codes, exception names and service names exactly as written. No numbering, "
    "no quotes, no commentary."
)

_BULLET_RE = re.compile(r"^\s*(?:[-*\u2022]+|\d+[.)]|[A-Za-z][.)](?=\s))\s*")


@dataclass(frozen=True)
class Expansion:
    """The queries to search with (original first) and why expansion fell back, if it did."""

    queries: list[str]
    notes: list[str] = field(default_factory=list)


class QueryRewriter(Protocol):
    """Rewrites a query into one or more search queries."""

    def expand(self, query: str) -> Expansion:
        """Search queries for ``query``; the original must come first and never fail.

        Args:
            query: The user's query.

        Returns:
            At least ``[query]``.
        """
        ...


def parse_variants(text: str, original: str, limit: int) -> list[str]:
    """Distinct, non-empty lines of a model reply, without bullets, quotes or the original.

    Args:
        text: The model's reply.
        original: The user's query (dropped if repeated, case-insensitively).
        limit: Maximum number of variants kept.

    Returns:
        Up to ``limit`` variants in reply order.
    """
    seen = {" ".join(original.split()).casefold()}
    variants: list[str] = []
    for line in text.splitlines():
        cleaned = _BULLET_RE.sub("", line).strip().strip("\"'`").strip()
        key = " ".join(cleaned.split()).casefold()
        if not cleaned or key in seen:
            continue
        seen.add(key)
        variants.append(cleaned)
        if len(variants) >= limit:
            break
    return variants


class LlmQueryRewriter:
    """Rewrite + paraphrases from a chat model, under a hard timeout."""

    def __init__(
        self,
        model: BaseChatModel,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_variants: int = DEFAULT_MAX_VARIANTS,
    ) -> None:
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.max_variants = max_variants
        # A slow call cannot be killed; it finishes in its worker while the query moves on.
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-rewrite")

    def close(self) -> None:
        """Stop accepting work (calls in flight finish on their own)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _ask(self, query: str) -> str:
        messages = [
            SystemMessage(REWRITE_SYSTEM_PROMPT.format(n=self.max_variants)),
            HumanMessage(query),
        ]
        return self.model.invoke(messages).text

    def expand(self, query: str) -> Expansion:
        """The original query, then up to ``max_variants`` model variants (fail-open).

        Args:
            query: The user's query.

        Returns:
            ``[query, *variants]``; just ``[query]`` with a note on timeout, error or empty reply.
        """
        if self.max_variants <= 0:
            return Expansion([query])
        future = self._pool.submit(self._ask, query)
        try:
            reply = future.result(timeout=self.timeout_seconds)
        except FutureTimeout:
            future.cancel()
            logger.warning("query rewrite timed out after %.1fs", self.timeout_seconds)
            return Expansion([query], ["query rewrite timed out; searched the original query"])
        except Exception as exc:  # fail-open by design: any model failure keeps the original
            logger.warning("query rewrite failed: %s", type(exc).__name__)
            return Expansion([query], ["query rewrite failed; searched the original query"])
        variants = parse_variants(reply, query, self.max_variants)
        if not variants:
            return Expansion([query], ["query rewrite was empty; searched the original query"])
        return Expansion([query, *variants])


def build_query_rewriter(
    settings: Settings, model: BaseChatModel | None
) -> LlmQueryRewriter | None:
    """The rewriter for ``model`` with the configured timeout and variant count.

    Args:
        settings: ``rewrite_timeout_seconds`` and ``rewrite_max_variants`` are read.
        model: The configured chat model; ``None`` (the extractive default) means no rewriter.

    Returns:
        ``None`` without a model or with ``rewrite_max_variants`` = 0.
    """
    if model is None or settings.rewrite_max_variants <= 0:
        return None
    return LlmQueryRewriter(
        model,
        timeout_seconds=settings.rewrite_timeout_seconds,
        max_variants=settings.rewrite_max_variants,
    )
