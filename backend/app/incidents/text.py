r"""Text the state stores cannot hold, or no reader sees, is stripped before anything is stored.

PostgreSQL rejects NUL in ``text`` and ``\u0000`` in ``jsonb``; UTF-8 cannot encode a lone
surrogate; Unicode non-characters (U+FDD0–U+FDEF and the last two code points of every plane)
are reserved for internal use. A terminal's control sequences (the colour codes of a log copied
from a terminal, ``ESC[1;31mERROR ESC[0m``) are not text: kept, they glue to the words they
colour (``31m503``) and show as noise in the review page. All of them are removed from every
string of a request — keys and values, at any depth — on both backends, so the same input is
stored the same way everywhere and never ends in a 500. Nothing a reader could see is lost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.incidents.redaction import Redactor

UNSTORABLE = re.compile(
    "[\x00\ud800-\udfff\ufdd0-\ufdef"
    + "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17))
    + "]"
)


#: A terminal control sequence: CSI (``ESC [ … m``, colours and cursor moves) or OSC
#: (``ESC ] … BEL``, window titles and links).
TERMINAL_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")


def storable_text(text: str) -> str:
    """``text`` without NUL, lone surrogates, non-characters and terminal control sequences."""
    return UNSTORABLE.sub("", TERMINAL_CONTROL.sub("", text))


def storable(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, scalars) with every string made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


def received(incident: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """An incident as it is stored and analysed: ``storable``, then its sensitive parts masked.

    The service stores and runs this form, and the evaluation runs the graph on it too.
    """
    masked: dict[str, Any] = redactor.data(storable(dict(incident)))
    return masked
