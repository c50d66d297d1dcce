"""The product page's inventory client: the inventory service answers 503.

The inventory dependency is an in-process fake behind ``httpx.MockTransport``: it has no
healthy instance behind its load balancer and answers ``503 Service Unavailable`` to every
stock lookup. The client retries, then the page shows "check availability in store".
"""

from __future__ import annotations

import logging

import httpx

SERVICE = "storefront"
INVENTORY_URL = "http://inventory-svc:8080"
ATTEMPTS = 3


def unhealthy_inventory(request: httpx.Request) -> httpx.Response:
    """The inventory service with no healthy instance: every request gets a 503."""
    return httpx.Response(
        503,
        json={"error": "no healthy upstream", "pool": {"in_use": 50, "size": 50}},
        headers={"retry-after": "5"},
    )


class InventoryClient:
    """Reads stock levels from the inventory service."""

    def __init__(self, client: httpx.Client, log: logging.Logger) -> None:
        self.client = client
        self.log = log

    def stock_for(self, sku: str) -> int:
        """Units in stock, retrying a failing service a bounded number of times."""
        for attempt in range(1, ATTEMPTS + 1):
            response = self.client.get(f"/v1/stock/sku/{sku}")
            if response.status_code < 500 or attempt == ATTEMPTS:
                response.raise_for_status()
                return int(response.json()["available"])
            self.log.warning(
                "GET %s -> %d %s (attempt %d/%d)",
                response.request.url.path,
                response.status_code,
                response.reason_phrase,
                attempt,
                ATTEMPTS,
            )
        raise AssertionError("unreachable")


def simulate(log: logging.Logger) -> int:
    """Render one product page; returns the HTTP status of the page."""
    page = logging.getLogger(f"{log.name}.page")
    page.info("GET /p/22018 (session 5b1e0c3a9d)")
    page.warning("feature-flag service responded in 900ms")
    transport = httpx.MockTransport(unhealthy_inventory)
    with httpx.Client(base_url=INVENTORY_URL, transport=transport) as client:
        try:
            InventoryClient(client, log).stock_for("22018")
        except httpx.HTTPStatusError:
            log.exception("stock unknown for sku 22018, showing 'check availability in store'")
    return 200
