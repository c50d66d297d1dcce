"""The rerank slot: a cross-encoder scores (query, passage) pairs after fusion.

The default is no reranker (fully offline). ``HttpReranker`` speaks two common wire formats:

- TEI (text-embeddings-inference): ``POST {base}/rerank {query, texts, truncate: true}`` ->
  ``[{index, score}]``;
- Cohere: ``POST {base}/v1/rerank {model, query, documents, top_n}`` ->
  ``{results: [{index, relevance_score}]}``.

A call that fits the network: only the first ``max_docs`` candidates are sent, each cut to
``max_chars`` characters of plain text; the returned indexes refer to that list and the engine maps
the scores back onto the full documents. Out-of-range or malformed entries are dropped. A transient
failure (timeout, connection error, HTTP 5xx) is retried once; anything still failing raises
``UpstreamError`` and the engine falls back to fusion order.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import httpx
from pydantic import SecretStr

from app.core.config import Settings
from app.core.errors import UpstreamError

logger = logging.getLogger(__name__)

RerankKind = Literal["tei", "cohere"]

DEFAULT_MAX_DOCS = 40
DEFAULT_MAX_CHARS = 1000
DEFAULT_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class RerankScore:
    """The reranker's score for the passage at ``index`` of the list it was given."""

    index: int
    score: float


def rerank_permutation(
    count: int, scores: Sequence[RerankScore]
) -> tuple[list[int], dict[int, float]]:
    """The order a rerank puts ``count`` passages in, and each scored passage's score.

    Scored passages come first, best score first (equal scores keep their incoming order); the
    passages the reranker left out follow in their incoming order. Scores for positions outside
    the list are ignored.

    Returns:
        ``(order, score by position)``.
    """
    by_index = {s.index: s.score for s in scores if 0 <= s.index < count}
    scored = sorted(by_index, key=lambda i: (-by_index[i], i))
    return scored + [i for i in range(count) if i not in by_index], by_index


class Reranker(Protocol):
    """Scores passages against a query with a model finer than the first-stage retrievers."""

    def rerank(self, query: str, texts: Sequence[str]) -> list[RerankScore]:
        """Scores for some or all of ``texts``; indexes refer to positions in ``texts``.

        Args:
            query: The original query.
            texts: Candidate passages in fusion order.

        Returns:
            One score per scored passage, in any order; passages left out get no score.

        Raises:
            UpstreamError: The reranker could not be reached or answered unusably.
        """
        ...


class _Transient(Exception):
    """A failure worth one retry."""


class HttpReranker:
    """A reranker behind HTTP, in TEI or Cohere format (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        kind: RerankKind = "tei",
        *,
        model: str | None = None,
        api_key: SecretStr | None = None,
        max_docs: int = DEFAULT_MAX_DOCS,
        max_chars: int = DEFAULT_MAX_CHARS,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        retries: int = 1,
    ) -> None:
        if kind not in ("tei", "cohere"):
            raise ValueError(f"unknown rerank kind {kind!r}: expected 'tei' or 'cohere'")
        self.base_url = base_url.rstrip("/")
        self.kind: RerankKind = kind
        self.model = model
        self.max_docs = max_docs
        self.max_chars = max_chars
        self.retries = retries
        headers = {"Accept": "application/json"}
        if api_key is not None and api_key.get_secret_value():
            headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
        # One client per reranker: pooled connections, an explicit timeout on every phase.
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_seconds), headers=headers)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _request(self, query: str, texts: list[str]) -> tuple[str, dict[str, Any]]:
        if self.kind == "tei":
            return f"{self.base_url}/rerank", {"query": query, "texts": texts, "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": texts, "top_n": len(texts)}
        if self.model:
            body["model"] = self.model
        return f"{self.base_url}/v1/rerank", body

    def _post_once(self, url: str, body: dict[str, Any]) -> Any:
        try:
            response = self._client.post(url, json=body)
        except httpx.TransportError as exc:  # timeouts, refused or reset connections
            raise _Transient(type(exc).__name__) from exc
        if response.status_code >= 500:
            raise _Transient(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise UpstreamError(f"reranker rejected the request (HTTP {response.status_code})")
        try:
            return response.json()
        except ValueError as exc:
            raise UpstreamError("reranker answered with invalid JSON") from exc

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        attempt = 0
        while True:
            try:
                return self._post_once(url, body)
            except _Transient as exc:
                if attempt >= self.retries:
                    raise UpstreamError(f"reranker unavailable ({exc})") from exc
                attempt += 1
                logger.warning("reranker call failed (%s); retrying once", exc)

    def _entries(self, payload: Any) -> list[Any]:
        if self.kind == "tei" and isinstance(payload, list):
            return payload
        if self.kind == "cohere" and isinstance(payload, dict):
            results = payload.get("results")
            if isinstance(results, list):
                return results
        raise UpstreamError("reranker answered in an unexpected format")

    def rerank(self, query: str, texts: Sequence[str]) -> list[RerankScore]:
        """Score the first ``max_docs`` texts, each cut to ``max_chars`` characters.

        Args:
            query: The original query.
            texts: Candidate passages in fusion order.

        Returns:
            Scores whose indexes are valid positions in ``texts`` (one per index, best kept).

        Raises:
            UpstreamError: Still failing after one retry, a 4xx answer, or an unusable body.
        """
        sent = [t[: self.max_chars] for t in list(texts)[: self.max_docs]]
        if not sent:
            return []
        url, body = self._request(query, sent)
        score_key = "score" if self.kind == "tei" else "relevance_score"
        best: dict[int, float] = {}
        for entry in self._entries(self._post(url, body)):
            if not isinstance(entry, dict):
                continue
            index, score = entry.get("index"), entry.get(score_key)
            if isinstance(index, bool) or not isinstance(index, int):
                continue
            if isinstance(score, bool) or not isinstance(score, int | float):
                continue
            if not 0 <= index < len(sent) or not math.isfinite(score):
                continue  # out of range: a buggy or mismatched server, never trusted
            best[index] = max(float(score), best.get(index, -math.inf))
        return [RerankScore(i, s) for i, s in best.items()]


def build_reranker(settings: Settings) -> HttpReranker | None:
    """The reranker the settings ask for, or ``None`` when ``rerank_url`` is unset."""
    if not settings.rerank_url:
        return None
    return HttpReranker(
        settings.rerank_url,
        settings.rerank_kind,
        model=settings.rerank_model,
        api_key=settings.rerank_api_key,
        max_docs=settings.rerank_max_docs,
        max_chars=settings.rerank_max_chars,
        timeout_seconds=settings.rerank_timeout_seconds,
    )
