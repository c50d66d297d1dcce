"""Helpers for the intake tests: a recording webhook receiver and payload builders."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from tests.helpers import LoopbackServer


class Receiver(LoopbackServer):
    """A webhook receiver: a real HTTP server on 127.0.0.1 recording every POST.

    ``status`` is the answer; ``delay`` seconds are waited before answering (a slow receiver);
    with ``hold`` every answer waits for ``release()``.
    """

    def __init__(self, status: int = 200, delay: float = 0.0, hold: bool = False) -> None:
        self.status = status
        self.delay = delay
        self.hold = hold
        self._released = threading.Event()
        super().__init__()

    @property
    def url(self) -> str:
        """The webhook URL."""
        return f"{self.base_url}/hooks/rca"

    def answer(self, path: str, body: Any, index: int) -> tuple[int, str, bytes] | None:
        """``status`` after the configured wait."""
        if self.hold:
            self._released.wait(30)
        if self.delay:
            self.stopping.wait(self.delay)
        return self.status, "text/plain", b"ok"

    def release(self) -> None:
        """Let held answers go."""
        self._released.set()

    def close(self) -> None:
        """Stop the server; answer any sleeping handler at once."""
        self._released.set()
        super().close()


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
