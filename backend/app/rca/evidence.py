"""The incident itself as evidence: message, stack-trace lines and log lines get citable ids.

Ids: ``incident:message``, ``incident:stack:<n>`` (1-based line of the stack trace) and
``incident:log:<n>`` (1-based log entry). They are part of the whitelist, so a claim about
where the failure happened can cite the traceback line that shows it.
"""

from __future__ import annotations

import re
from typing import Any

from app.rca.base import EvidenceItem

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_JAVA_FRAME_RE = re.compile(r"^\s*at (?P<func>[\w.$<>]+)\((?P<file>[^:()]+):(?P<line>\d+)\)")
_EXCEPTION_RE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Timeout))"
    r"(?::\s*(?P<message>.*))?$"
)


def incident_evidence(incident: dict[str, Any]) -> list[EvidenceItem]:
    """Citable items of an incident, in a stable order."""
    items: list[EvidenceItem] = []
    message = str(incident.get("message") or "").strip()
    if message:
        items.append(EvidenceItem("incident:message", message, "incident"))
    stack = str(incident.get("stack_trace") or "")
    for number, line in enumerate(stack.splitlines(), start=1):
        if line.strip():
            items.append(EvidenceItem(f"incident:stack:{number}", line.rstrip(), "incident"))
    for number, line in enumerate(incident.get("logs") or [], start=1):
        if str(line).strip():
            items.append(EvidenceItem(f"incident:log:{number}", str(line).rstrip(), "incident"))
    return items


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
    # Python prints the innermost frame last; the JVM prints it first.
    frame = frames[-1] if python_trace else frames[0]
    exception = (
        exceptions[-1] if python_trace and exceptions else (exceptions[0] if exceptions else None)
    )
    return frame, exception


def describe_frame(text: str) -> str:
    """``file:line in function`` for a Python or JVM frame line; the line itself otherwise."""
    match = _FRAME_RE.match(text) or _JAVA_FRAME_RE.match(text)
    if not match:
        return text.strip()
    return f"{match.group('file')}:{match.group('line')} in {match.group('func')}"
