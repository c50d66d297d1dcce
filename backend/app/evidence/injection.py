"""Instruction-like text in an incident: phrases aimed at the model rather than at a reader.

An incident's text is written by whoever raised it, and so may carry an instruction for the
model that analyses it ("ignore previous instructions", "cite …", "mark … confidence").
``find_injections`` finds such phrases so the reviewer sees a flag; the whitelist and the
citation check keep the draft to the evidence whatever the model obeyed.
``without_instructions`` blanks them out of the reporter's message before it is searched or
read for signals: "cite PAY-408" is an order, not a symptom, and must neither pull PAY-408's
doc up nor count as a hint. Evidence ids follow ``app.rca.evidence``: ``incident:message``,
``incident:event``, ``incident:stack:<n>``, ``incident:log:<n>``, and a collected item's own
id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_ID_OR_CODE = (
    r"(?:error-doc-[0-9a-f]+|incident:\w+|prom:\w+|log:\S+|[A-Z]{2,6}-\d{3}(?:-[A-Z]{2,10})*)"
)
#: Each pattern is an instruction to a model; ordinary operational prose must not match.
INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|"
        r"earlier|preceding)\s+(?:instructions?|rules|prompts?|directions|guidelines|context)",
        r"\byou\s+are\s+now\b",
        r"\bsystem\s+prompt\b|\bsystem\s+(?:note|instructions?)\s*:",
        rf"\bcite\s+(?:only\s+)?{_ID_OR_CODE}",
        rf"\b(?:answer|respond|reply|conclude|classify|categori[sz]e)\s+"
        rf"(?:(?:this|the|it)\s+)?(?:(?:incident|ticket|issue|alert|case)\s+)?"
        rf"(?:with\s+|as\s+|under\s+|that\s+it\s+is\s+)?{_ID_OR_CODE}",
        r"\bcite\b[^.\n]{0,60}\b(?:every|each|all)\s+claims?\b",
        r"\b(?:mark|set|rate|label|report)\b[^.\n]{0,40}\bconfidence\b",
        r"\bconfidence\s*(?:[:=]|as|to)?\s*(?:high|certain|100\s*%)",
        r"\bwith\s+(?:high|full|100\s*%)\s+confidence\b",
    )
)


def _texts(
    incident: Mapping[str, Any], collected: Iterable[Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(evidence id, text) for every free-text part of an incident and its collected logs."""
    texts = [(f"incident:{name}", str(incident.get(name) or "")) for name in ("message", "event")]
    stack = str(incident.get("stack_trace") or "")
    texts += [(f"incident:stack:{n}", line) for n, line in enumerate(stack.splitlines(), 1)]
    texts += [
        (f"incident:log:{n}", str(line)) for n, line in enumerate(incident.get("logs") or [], 1)
    ]
    for item in collected:
        for line in item.get("lines") or []:
            texts.append((str(item.get("id")), str(line.get("text") or "")))
    return texts


def find_injections(
    incident: Mapping[str, Any], collected: Iterable[Mapping[str, Any]] = ()
) -> list[dict[str, str]]:
    """Instruction-like phrases in an incident's text, each with the evidence id holding it.

    Args:
        incident: The incident (message, event, stack trace, logs).
        collected: Items the ``collect`` node gathered (their log lines are scanned).

    Returns:
        ``{"phrase", "evidence_id"}`` per match, in text order, without repeats.
    """
    flags: list[dict[str, str]] = []
    for evidence_id, text in _texts(incident, collected):
        found = sorted(
            (m.start(), m.group(0)) for p in INJECTION_PATTERNS for m in p.finditer(text)
        )
        for _, phrase in found:
            flag = {"phrase": phrase, "evidence_id": evidence_id}
            if flag not in flags:
                flags.append(flag)
    return flags


def without_instructions(text: str) -> str:
    """``text`` with every instruction-like phrase blanked out (its length kept).

    Args:
        text: The reporter's free text.

    Returns:
        The same text where each phrase ``find_injections`` would flag is spaces.
    """
    spans = [m.span() for p in INJECTION_PATTERNS for m in p.finditer(text)]
    if not spans:
        return text
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
