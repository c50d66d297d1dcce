"""Mask secrets and personal data in incident text before it is stored, logged or sent anywhere.

This is a retail and card-payment domain: card numbers (Luhn-checked, so order ids and
timestamps survive), API keys, tokens and passwords in ``key=value`` or header form, bearer
tokens and e-mail addresses are replaced by visible markers such as ``[REDACTED:card]``.
Extra patterns can be configured (``RCA_REDACTION_PATTERNS``: a JSON object name → regex).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_CARD_RE = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_BEARER_RE = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")
_SECRET_RE = re.compile(
    r"(?i)\b(password|passwd|pwd|secret|client[_-]?secret|token|access[_-]?token|"
    r"refresh[_-]?token|api[_-]?key|apikey|x-api-key|access[_-]?key|private[_-]?key|"
    r"authorization|cvv|cvc)(\"?\s*[:=]\s*\"?)(?!\[REDACTED|bearer\b|basic\b)([^\s\"',;&}]+)"
)
_EMAIL_RE = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum used by payment card numbers."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _mask_card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    if 13 <= len(digits) <= 19 and luhn_valid(digits):
        return "[REDACTED:card]"
    return match.group(0)


class Redactor:
    """Applies the built-in and configured patterns to text."""

    def __init__(self, extra_patterns: Mapping[str, str] | None = None) -> None:
        self._extra = [(name, re.compile(rx)) for name, rx in (extra_patterns or {}).items()]

    def text(self, value: str) -> str:
        """``value`` with every sensitive part masked."""
        value = _BEARER_RE.sub(lambda m: f"{m.group(1)} [REDACTED:token]", value)
        value = _SECRET_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}[REDACTED:secret]", value)
        value = _CARD_RE.sub(_mask_card, value)
        value = _EMAIL_RE.sub("[REDACTED:email]", value)
        for name, pattern in self._extra:
            value = pattern.sub(f"[REDACTED:{name}]", value)
        return value

    def data(self, value: Any) -> Any:
        """Strings anywhere inside dicts and lists masked; other values unchanged."""
        return walk(value, self.text)


def walk(value: Any, fn: Callable[[str], str]) -> Any:
    """Apply ``fn`` to every string in a JSON-like structure."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [walk(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: walk(v, fn) for k, v in value.items()}
    return value
