"""The POS API's sale submission: a till sends a line with an impossible quantity.

A scanner double read turns one item into 240; the sale model accepts 1-99 per line, so
validation fails and the API answers 422 naming ``lines[1].quantity``. The till is an
in-process call to the handler, no network.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field, ValidationError

SERVICE = "pos-api"


class SaleLine(BaseModel):
    plu: str = Field(min_length=1)
    quantity: int = Field(gt=0, le=99)
    unit_price_cents: int = Field(ge=0)


class Sale(BaseModel):
    store: str
    till: int
    lines: list[SaleLine] = Field(min_length=1)
    total_cents: int


def submit_sale(payload: dict[str, object], log: logging.Logger) -> tuple[int, dict[str, object]]:
    """``POST /pos/v1/sales``: validate and book a sale; returns (status, body)."""
    try:
        sale = Sale.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in first["loc"]).replace(
            ".[", "["
        )
        log.error(
            "POST /pos/v1/sales store=%s till=%s -> 422: %s %s",
            payload.get("store"),
            payload.get("till"),
            where,
            first["msg"],
            exc_info=True,
        )
        return 422, {"error": {"code": "validation_error", "field": where}}
    log.info("sale booked: %d line(s), total %d", len(sale.lines), sale.total_cents)
    return 201, {}


def simulate(log: logging.Logger) -> int:
    """One till submits a sale with a double-read quantity; returns the HTTP status."""
    till = logging.getLogger(f"{log.name}.till")
    till.info("cashier login store=0231 till=4")
    till.warning("scanner duplicate read suppressed (EAN 5012345678900)")
    log.warning("loyalty card not found: 6331*****0021")
    status, _ = submit_sale(
        {
            "store": "0231",
            "till": 4,
            "lines": [
                {"plu": "4011", "quantity": 2, "unit_price_cents": 129},
                {"plu": "5012345678900", "quantity": 240, "unit_price_cents": 349},
            ],
            "total_cents": 84018,
        },
        log,
    )
    return status
