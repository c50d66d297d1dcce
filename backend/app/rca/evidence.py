"""The incident itself as evidence: message, stack-trace lines and log lines get citable ids.

Ids: the structured fields ``incident:service``, ``incident:error_code`` and
``incident:event``, then ``incident:message``, ``incident:stack:<n>`` (1-based line of the
stack trace), ``incident:log:<n>`` (1-based log entry) and ``incident:note:<n>`` (a note a
reviewer added when asking for re-analysis). They are part of the whitelist, so a claim about
where the failure happened can cite the traceback line that shows it. Collected evidence
(``prom:<hash>``, ``log:<file>:<line>``, from ``app.evidence.sources``) is citable the same
way; ``collected_items`` gives each its text: the summary, and a log record's lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from app.evidence.escapes import stack_trace_text
from app.rca.base import EvidenceItem

#: Structured incident fields that are citable evidence, in this order.
STRUCTURED_FIELDS = ("service", "error_code", "event")
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_JAVA_FRAME_RE = re.compile(r"^\s*at (?P<func>[\w.$<>]+)\((?P<file>[^:()]+):(?P<line>\d+)\)")
_EXCEPTION_RE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Timeout))"
    r"(?::\s*(?P<message>.*))?$"
)
#: A JVM ``Caused by:`` line; the last one is the root cause.
_CAUSED_BY_RE = re.compile(r"^Caused by:\s*\S")


def incident_evidence(incident: dict[str, Any]) -> list[EvidenceItem]:
    """Citable items of an incident, in a stable order."""
    items: list[EvidenceItem] = []
    for name in STRUCTURED_FIELDS:
        value = str(incident.get(name) or "").strip()
        if value:
            items.append(EvidenceItem(f"incident:{name}", value, "incident"))
    message = str(incident.get("message") or "").strip()
    if message:
        items.append(EvidenceItem("incident:message", message, "incident"))
    stack = stack_trace_text(incident)
    for number, line in enumerate(stack.splitlines(), start=1):
        if line.strip():
            items.append(EvidenceItem(f"incident:stack:{number}", line.rstrip(), "incident"))
    for number, line in enumerate(incident.get("logs") or [], start=1):
        if str(line).strip():
            items.append(EvidenceItem(f"incident:log:{number}", str(line).rstrip(), "incident"))
    for number, note in enumerate(incident.get("reviewer_notes") or [], start=1):
        if str(note).strip():
            items.append(EvidenceItem(f"incident:note:{number}", str(note).strip(), "incident"))
    return items


def collected_text(item: Mapping[str, Any]) -> str:
    """What a collected item says, as a citation is checked against: summary, then its lines."""
    lines = [str(line.get("text", "")) for line in item.get("lines") or [] if line.get("text")]
    return "\n".join([str(item.get("summary") or ""), *lines]).strip()


def collected_items(collected: Iterable[Mapping[str, Any]]) -> list[EvidenceItem]:
    """Collected items (metric series, log records) as citable evidence, in their order."""
    return [EvidenceItem(str(c["id"]), collected_text(c), "collected") for c in collected]


def failure_location(
    evidence: list[EvidenceItem],
) -> tuple[EvidenceItem, EvidenceItem | None] | None:
    """The innermost stack frame and the exception line after it, when a trace is present."""
    frames = [
        e
        for e in evidence
        if e.id.startswith("incident:stack:")
        and (_FRAME_RE.match(e.text) or _JAVA_FRAME_RE.match(e.text))
    ]
    if not frames:
        return None
    exceptions = [
        e
        for e in evidence
        if e.id.startswith("incident:stack:") and _EXCEPTION_RE.match(e.text.strip())
    ]
    python_trace = bool(_FRAME_RE.match(frames[0].text))
    if python_trace:
        # Python prints the innermost frame last, and the exception after it.
        return frames[-1], exceptions[-1] if exceptions else None
    # The JVM prints the innermost frame first; with ``Caused by:`` blocks the root cause is
    # the last one, and its first frame is where it was raised.
    stack = [e for e in evidence if e.id.startswith("incident:stack:")]
    causes = [e for e in stack if _CAUSED_BY_RE.match(e.text.strip())]
    if causes:
        root = stack.index(causes[-1])
        after = [e for e in stack[root + 1 :] if _JAVA_FRAME_RE.match(e.text)]
        return (after[0] if after else frames[0]), causes[-1]
    return frames[0], exceptions[0] if exceptions else None


def describe_frame(text: str) -> str:
    """``file:line in function`` for a Python or JVM frame line; the line itself otherwise."""
    match = _FRAME_RE.match(text) or _JAVA_FRAME_RE.match(text)
    if not match:
        return text.strip()
    return f"{match.group('file')}:{match.group('line')} in {match.group('func')}"


def evidence_position(evidence_id: str) -> tuple[str, int]:
    """An incident piece's place, for ordering: its source, then its line number."""
    prefix, _, number = evidence_id.rpartition(":")
    return prefix, int(number) if number.isdigit() else 0
