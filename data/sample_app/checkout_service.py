"""A small checkout module used by the smoke run: its discount calculation has a real bug.

A "buy N, share the discount" promotion divides the basket discount across the qualifying
items. A basket whose qualifying items are all free samples (price 0) has no qualifying units,
and the per-unit discount divides by zero.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LineItem:
    sku: str
    quantity: int
    unit_price_cents: int


@dataclass(frozen=True)
class Promotion:
    code: str
    basket_discount_cents: int


def qualifying_units(items: list[LineItem]) -> int:
    """Units that share a promotion: paid items only."""
    return sum(item.quantity for item in items if item.unit_price_cents > 0)


def calculate_discount(items: list[LineItem], promotion: Promotion) -> int:
    """Discount per qualifying unit, in cents."""
    per_unit = promotion.basket_discount_cents // qualifying_units(items)
    return per_unit


def checkout_total(items: list[LineItem], promotion: Promotion | None = None) -> int:
    """The basket total after the promotion, in cents."""
    subtotal = sum(item.quantity * item.unit_price_cents for item in items)
    if promotion is None:
        return subtotal
    discount = calculate_discount(items, promotion) * qualifying_units(items)
    return max(0, subtotal - discount)


def crashing_basket() -> tuple[list[LineItem], Promotion]:
    """A realistic basket that triggers the bug: only free samples, with a promotion code."""
    items = [LineItem("SAMPLE-COFFEE-10G", 2, 0), LineItem("SAMPLE-TEA-5G", 1, 0)]
    return items, Promotion("SPRING10", 1000)
