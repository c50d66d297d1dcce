"""Helpers for the intake tests: a recording webhook receiver and payload builders."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    """A real HTTP server on 127.0.0.1 recording every POST.

    ``status`` is the answer; ``delay`` seconds are waited before answering (a slow receiver);
    with ``hold`` every answer waits for ``release()``.
    """

    status: int = 200
    delay: float = 0.0
    hold: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with receiver.arrived:
                    receiver.requests.append({"path": self.path, "body": body})
                    receiver.arrived.notify_all()
                if receiver.hold:
                    receiver._released.wait(30)
                if receiver.delay:
                    receiver._stop.wait(receiver.delay)
                try:
                    self.send_response(receiver.status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass  # the client gave up (timeout)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """The webhook URL."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/hooks/rca"

    def bodies(self) -> list[Any]:
        """Every body received so far."""
        with self._lock:
            return [r["body"] for r in self.requests]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Any]:
        """Block until ``count`` requests arrived (or the timeout passed); returns the bodies."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout=timeout)
            return [r["body"] for r in self.requests]

    def release(self) -> None:
        """Let held answers go."""
        self._released.set()

    def close(self) -> None:
        """Stop the server; answer any sleeping handler at once."""
        self._stop.set()
        self._released.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def alert(
    fingerprint: str | None = None,
    *,
    status: str = "firing",
    alertname: str = "CheckoutErrors",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One Alertmanager alert as the webhook sends it."""
    return {
        "status": status,
        "labels": {"alertname": alertname, "severity": "page", **(labels or {})},
        "annotations": annotations
        if annotations is not None
        else {"summary": "Checkout returns HTTP 500 for some baskets"},
        "startsAt": "2026-11-29T10:00:00.000Z",
        "endsAt": "0001-01-01T00:00:00Z" if status == "firing" else "2026-11-29T10:30:00Z",
        "generatorURL": "http://prometheus:9090/graph?g0.expr=rate%28errors%5B5m%5D%29",
        "fingerprint": fingerprint or uuid.uuid4().hex[:16],
    }


def notification(*alerts: dict[str, Any], status: str | None = None) -> dict[str, Any]:
    """An Alertmanager webhook body (version 4) around ``alerts``."""
    first = alerts[0]["labels"] if alerts else {"alertname": "x"}
    return {
        "version": "4",
        "groupKey": '{}:{alertname="' + str(first.get("alertname")) + '"}',
        "truncatedAlerts": 0,
        "status": status
        or ("firing" if any(a["status"] == "firing" for a in alerts) else "resolved"),
        "receiver": "rca",
        "groupLabels": {"alertname": first.get("alertname")},
        "commonLabels": {"alertname": first.get("alertname")},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }
