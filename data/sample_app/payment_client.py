"""Checkout's payment client: authorising a card payment with an external provider.

The provider is reachable but never answers (a degraded provider), so every read times out.
The "network" is an in-process socket pair whose far end stays silent: the timeout is a real
``TimeoutError`` from the socket layer, with no network involved. After bounded retries the
client gives up with ``PaymentProviderTimeout`` chained to the last ``TimeoutError``.
"""

from __future__ import annotations

import json
import logging
import socket
from dataclasses import dataclass

SERVICE = "checkout"
#: Scaled down from production's 30 s so the scenario runs quickly.
READ_TIMEOUT_SECONDS = 0.05
ATTEMPTS = 3


class PaymentProviderTimeout(Exception):
    """The payment provider did not answer in time."""


@dataclass(frozen=True)
class PaymentRequest:
    order_id: str
    amount_cents: int
    currency: str
    idempotency_key: str


class SilentProvider:
    """A provider endpoint that accepts the request and never answers."""

    def __init__(self) -> None:
        self.client_end, self.provider_end = socket.socketpair()

    def close(self) -> None:
        self.client_end.close()
        self.provider_end.close()


class PaymentClient:
    """POSTs an authorisation and waits for the provider's answer."""

    def __init__(self, provider: SilentProvider, log: logging.Logger) -> None:
        self.provider = provider
        self.log = log

    def _read_response(self, timeout: float) -> bytes:
        sock = self.provider.client_end
        sock.settimeout(timeout)
        return sock.recv(65536)

    def _post_authorize(self, request: PaymentRequest) -> dict[str, object]:
        body = json.dumps(
            {
                "order": request.order_id,
                "amount": request.amount_cents,
                "currency": request.currency,
            }
        ).encode()
        self.provider.client_end.sendall(b"POST /v2/payments/authorize HTTP/1.1\r\n\r\n" + body)
        raw = self._read_response(READ_TIMEOUT_SECONDS)
        return dict(json.loads(raw))

    def authorize(self, request: PaymentRequest) -> dict[str, object]:
        """Authorise with bounded retries (same idempotency key, so no double charge)."""
        last: TimeoutError | None = None
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return self._post_authorize(request)
            except TimeoutError as exc:
                last = exc
                self.log.warning(
                    "provider read timeout after %.2fs calling /v2/payments/authorize "
                    "(attempt %d/%d, idempotency_key=%s)",
                    READ_TIMEOUT_SECONDS,
                    attempt,
                    ATTEMPTS,
                    request.idempotency_key,
                )
        raise PaymentProviderTimeout(
            f"payment provider did not answer within {READ_TIMEOUT_SECONDS}s "
            f"after {ATTEMPTS} attempts (order {request.order_id})"
        ) from last


def simulate(log: logging.Logger) -> int:
    """Handle one ``POST /checkout/pay``; returns the HTTP status checkout answered."""
    noise = logging.getLogger(f"{log.name}.cart")
    noise.info("cart 7f3c9e21 loaded: 3 items, subtotal 84.97 EUR")
    noise.warning("promotion service slow: 812ms for GET /promotions/active")
    request = PaymentRequest("771204", 8497, "EUR", "c0ffee00-7712-4b04-9e11-000000771204")
    log.info("authorizing order=%s amount=%d %s", request.order_id, 8497, request.currency)
    provider = SilentProvider()
    try:
        PaymentClient(provider, log).authorize(request)
    except PaymentProviderTimeout:
        log.exception("payment authorization failed for order %s, returning 504", request.order_id)
        return 504
    finally:
        provider.close()
    return 200
