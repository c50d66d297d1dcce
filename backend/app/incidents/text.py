r"""Text the state stores cannot hold is stripped before anything is stored.

PostgreSQL rejects NUL in ``text`` and ``\u0000`` in ``jsonb``; UTF-8 cannot encode a lone
surrogate; Unicode non-characters (U+FDD0–U+FDEF and the last two code points of every plane)
are reserved for internal use. All of them are removed from every string of a request — keys
and values, at any depth — on both backends, so the same input is stored the same way
everywhere and never ends in a 500. Nothing a reader could see is lost.
"""

from __future__ import annotations

import re
from typing import Any

UNSTORABLE = re.compile(
    "[\x00\ud800-\udfff\ufdd0-\ufdef"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
    + "]"
)


def storable_text(text: str) -> str:
    """``text`` without NUL, lone surrogates and non-characters."""
    return UNSTORABLE.sub("", text)


def storable(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, scalars) with every string made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value
