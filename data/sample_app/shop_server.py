"""The sample checkout as a small running service: real HTTP, real metrics, a real log file.

Run ``python data/sample_app/shop_server.py --port 8101 --log-file var/live/logs/checkout.log``.

- ``POST /checkout`` prices a basket with ``checkout_service.checkout_total`` (its discount
  calculation has a real division-by-zero bug) and answers 200, or 500 when it raises.
- ``GET /metrics`` exports, with ``prometheus-client``, the RED metrics the agent's default
  templates read: ``http_requests_total{method, path, code}`` and
  ``http_request_duration_seconds`` (the scrape adds the ``service`` label), plus the process
  metrics (``process_start_time_seconds``).
- A built-in shopper posts a normal basket every ``--interval`` seconds, so the service has
  traffic and a baseline without any load generator.
- ``POST /admin/fail`` makes the shopper send the basket that triggers the bug (free samples
  with a promotion code); ``POST /admin/heal`` switches back. ``GET /health`` answers 200.

Every request is logged to ``--log-file`` (UTC ISO timestamps); a failed checkout is logged at
ERROR with its traceback, as the Python logging module writes it.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from checkout_service import LineItem, Promotion, checkout_total, crashing_basket
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

REQUESTS = Counter(
    "http_requests", "HTTP requests by method, path and status.", ["method", "path", "code"]
)
DURATION = Histogram(
    "http_request_duration_seconds",
    "HTTP request latency.",
    ["method", "path"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
NORMAL_BASKET = {
    "items": [{"sku": "COFFEE-1KG", "quantity": 2, "unit_price_cents": 1500}],
    "promotion": {"code": "SPRING10", "basket_discount_cents": 1000},
}

logger = logging.getLogger("checkout-service")


def failing_basket() -> dict[str, Any]:
    """The basket that triggers the bug, as the shopper posts it."""
    items, promotion = crashing_basket()
    return {
        "items": [
            {"sku": i.sku, "quantity": i.quantity, "unit_price_cents": i.unit_price_cents}
            for i in items
        ],
        "promotion": {
            "code": promotion.code,
            "basket_discount_cents": promotion.basket_discount_cents,
        },
    }


class Shop:
    """The service state: whether the shopper sends the failing basket."""

    def __init__(self) -> None:
        self.failing = threading.Event()


def make_handler(shop: Shop) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/metrics":
                self._send(200, generate_latest(), CONTENT_TYPE_LATEST)
            elif self.path == "/health":
                self._send(200, b'{"status":"ok"}')
            else:
                self._send(404, b'{"error":"not found"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path == "/admin/fail":
                shop.failing.set()
                logger.info("admin: shopper now sends the free-sample basket")
                self._send(200, b'{"failing":true}')
            elif self.path == "/admin/heal":
                shop.failing.clear()
                logger.info("admin: shopper back to normal baskets")
                self._send(200, b'{"failing":false}')
            elif self.path == "/checkout":
                self._checkout(body)
            else:
                self._send(404, b'{"error":"not found"}')

        def _checkout(self, body: bytes) -> None:
            started = time.perf_counter()
            code = 200
            try:
                basket = json.loads(body or b"{}")
                items = [LineItem(**item) for item in basket["items"]]
                promotion = Promotion(**basket["promotion"]) if basket.get("promotion") else None
                total = checkout_total(items, promotion)
                logger.info("POST /checkout status=200 total_cents=%d items=%d", total, len(items))
                self._send(200, json.dumps({"total_cents": total}).encode())
            except Exception:
                code = 500
                logger.exception("POST /checkout status=500 checkout failed pricing the basket")
                self._send(500, b'{"error":"internal error"}')
            finally:
                REQUESTS.labels("POST", "/checkout", str(code)).inc()
                DURATION.labels("POST", "/checkout").observe(time.perf_counter() - started)

        def _send(self, status: int, data: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def shopper(shop: Shop, url: str, interval: float, stop: threading.Event) -> None:
    """Post a basket every ``interval`` seconds until ``stop`` is set."""
    while not stop.wait(interval):
        basket = failing_basket() if shop.failing.is_set() else NORMAL_BASKET
        request = urllib.request.Request(
            url, data=json.dumps(basket).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            urllib.request.urlopen(request, timeout=5).close()
        except OSError:
            pass  # a 500 is the point; the server logged and counted it


def configure_logging(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    formatter = logging.Formatter(
        "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s %(message)s", "%Y-%m-%dT%H:%M:%S"
    )
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--log-file", type=Path, required=True)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between baskets")
    parser.add_argument("--failing", action="store_true", help="start in the failing state")
    args = parser.parse_args()
    configure_logging(args.log_file)
    shop = Shop()
    if args.failing:
        shop.failing.set()
    server = ThreadingHTTPServer((args.host, args.port), make_handler(shop))
    server.daemon_threads = True
    stop = threading.Event()
    url = f"http://{args.host}:{server.server_address[1]}/checkout"
    threading.Thread(target=shopper, args=(shop, url, args.interval, stop), daemon=True).start()
    logger.info("checkout-service listening on %s:%d", args.host, server.server_address[1])
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()


if __name__ == "__main__":
    main()
