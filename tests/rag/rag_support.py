"""Helpers for the retrieval-engine tests: a real rerank HTTP server, a fake reranker."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from app.core.errors import UpstreamError
from app.rag.rerank import RerankScore


@dataclass
class Reply:
    """One scripted answer of the rerank server."""

    status: int = 200
    body: Any = None
    delay: float = 0.0
    raw: bytes | None = None


@dataclass
class RerankServer:
    """A real HTTP server on 127.0.0.1 answering from a script (the last step repeats).

    ``body`` may be a callable of the parsed request body; every request is recorded as
    ``{"path", "headers", "body"}``.
    """

    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    index = min(len(server.requests), len(server.script)) - 1
                    reply = server.script[index] if server.script else Reply(body=[])
                if reply.delay:
                    server._stop.wait(reply.delay)
                payload = reply.body(body) if callable(reply.body) else reply.body
                data = reply.raw if reply.raw is not None else json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout): nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        """Stop serving (pending delays end at once)."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()


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
