r"""Evidence pasted JSON-escaped: a trace whose line breaks arrive as two characters, ``\n``.

Copying a stack trace out of a JSON log record or an API response keeps its escapes:
``Traceback (most recent call last):\n  File "/app/checkout_service.py", …\nZeroDivisionError``.
Read as it is, the trace is one line, and the ``n`` of each ``\n`` sticks to the next word
(``nZeroDivisionError``). ``stack_trace_text`` turns an escaped trace back into its lines, for
every reader of the field (evidence ids, parsing, signals, the retrieval query), and
``without_escapes`` lets a log line or a message that carries one be read word by word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: ``\n``, ``\r\n``, ``\t`` written as a backslash and a letter.
_ESCAPED_BREAK_RE = re.compile(r"\\r\\n|\\[nrt]")
_ESCAPES = {"\\r\\n": "\n", "\\n": "\n", "\\r": "\n", "\\t": "\t"}
#: Breaks a text must hold, written escaped, to be read as an escaped trace.
MIN_ESCAPED_BREAKS = 2


def stack_trace_text(incident: Mapping[str, Any]) -> str:
    r"""The incident's ``stack_trace``, its lines restored when it arrived JSON-escaped.

    Only a trace with no real line break and at least ``MIN_ESCAPED_BREAKS`` escaped ones is
    unescaped (``\"`` too): a trace with real lines keeps a Windows path such as
    ``C:\new\tools`` as written.
    """
    text = str(incident.get("stack_trace") or "")
    if "\n" in text.strip() or len(_ESCAPED_BREAK_RE.findall(text)) < MIN_ESCAPED_BREAKS:
        return text
    restored = _ESCAPED_BREAK_RE.sub(lambda m: _ESCAPES[m.group(0)], text)
    return restored.replace('\\"', '"')


def without_escapes(text: str) -> str:
    """``text`` with every escaped break read as a space, for matching words and names."""
    return _ESCAPED_BREAK_RE.sub(" ", text)
