"""Helpers for the retrieval-engine tests: a real rerank HTTP server, a fake reranker."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tests.helpers import LoopbackServer

from app.core.errors import UpstreamError
from app.rag.rerank import RerankScore


@dataclass
class Reply:
    """One scripted answer of the rerank server."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    raw: bytes | None = None


class RerankServer(LoopbackServer):
    """A real HTTP server on 127.0.0.1 answering from a script (the last step repeats).

    ``body`` may be a callable of the parsed request body; every request is recorded as
    ``{"path", "headers", "body"}``.
    """

    def __init__(self) -> None:
        self.script: list[Reply] = []
        super().__init__()

    def answer(self, path: str, body: Any, index: int) -> tuple[int, str, bytes] | None:
        """The script's step for this request, after its delay."""
        reply = self.script[min(index, len(self.script) - 1)] if self.script else Reply(body=[])
        if reply.delay:
            self.stopping.wait(reply.delay)
        payload = reply.body(body) if callable(reply.body) else reply.body
        data = reply.raw if reply.raw is not None else json.dumps(payload).encode()
        return reply.status, "application/json", data


def tei_scores(scores: Sequence[float]) -> Any:
    """A TEI body scoring the sent texts with ``scores`` (extra texts score 0)."""

    def answer(body: dict[str, Any]) -> list[dict[str, Any]]:
        texts = body["texts"]
        return [
            {"index": i, "score": scores[i] if i < len(scores) else 0.0} for i in range(len(texts))
        ]

    return answer


class FakeReranker:
    """A ``Reranker`` scoring by a keyword, or failing; records every call."""

    def __init__(self, keyword: str = "", *, fail: bool = False) -> None:
        self.keyword = keyword
        self.fail = fail
        self.calls: list[tuple[str, list[str]]] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[RerankScore]:
        self.calls.append((query, list(texts)))
        if self.fail:
            raise UpstreamError("reranker unavailable (ConnectError)")
        return [
            RerankScore(i, 0.9 if self.keyword and self.keyword in t else 0.1)
            for i, t in enumerate(texts)
        ]


def code_of(doc: Any) -> str:
    """A knowledge doc's error code."""
    return str(doc.metadata["error_code"])
