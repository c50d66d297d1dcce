"""Find the causal error of an incident: the entry points of evidence parsing.

Input is whatever an incident carries (a stack trace, log lines, a message); output is a
``ParsedEvidence``: the exception, the deepest application frame, error codes, HTTP error
statuses, service names, the causal line and a ``signature`` in which volatile parts (ids,
timestamps, addresses, numbers) are normalised so repeats of one failure group together.

Logs: the first ERROR/FATAL/CRITICAL record carrying an exception, an error code or an HTTP
error status; then the first ERROR record at all; then WARN; INFO and DEBUG are noise. Traces
follow ``python_trace`` and ``java_trace``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from app.evidence.escapes import stack_trace_text
from app.evidence.injection import without_instructions
from app.evidence.logs import Record, RecordFacts, read_record, split_records, trace_line
from app.evidence.model import EvidenceFormat, Level, ParsedEvidence
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS, normalise, unique
from app.evidence.python_trace import parse_python_traceback

MAX_SIGNATURE_CHARS = 300


def parse_entries(
    entries: Iterable[str], patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> ParsedEvidence:
    """Parse log entries (or one text) and pick the causal error.

    Args:
        entries: Log entries; each starts a new record (multi-line entries may hold traces).
        patterns: Error-code regular expressions.

    Returns:
        What was found; an empty ``ParsedEvidence`` for empty input.
    """
    facts = [read_record(r, patterns) for r in split_records(entries)]
    return _evidence(facts, _pick_causal(facts))


def parse_text(text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS) -> ParsedEvidence:
    """Parse raw text: a traceback, a JVM stack trace, a log file or a mix of them.

    Args:
        text: The raw text.
        patterns: Error-code regular expressions.

    Returns:
        What was found.
    """
    return parse_entries([text], patterns)


def parse_stack_trace(
    text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> ParsedEvidence:
    """Parse a stack-trace field: a trace, or a bare ``Type: message`` with trailing lines.

    Args:
        text: The stack-trace text.
        patterns: Error-code regular expressions.

    Returns:
        What was found.
    """
    parsed = parse_text(text, patterns)
    if parsed.format in (EvidenceFormat.PYTHON_TRACEBACK, EvidenceFormat.JAVA_STACK_TRACE):
        return parsed
    # No framed trace: a bare "Type: message" line, whose message may run over a few lines.
    trace = parse_python_traceback(text)
    if trace is None:
        return parsed
    facts = read_record(Record(trace_line(trace), trace), patterns)
    return _evidence([facts], facts)


def parse_incident(
    incident: Mapping[str, Any], patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> ParsedEvidence:
    """Parse an incident's ``stack_trace``, ``logs`` and ``message`` together.

    The stack trace decides when it names an exception; then a log record carrying an
    exception, code or status (INFO noise aside); then the message if it carries one; then an
    ERROR or WARN log record; then the message. Codes, statuses and services from every part
    are kept, the chosen part's first.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        patterns: Error-code regular expressions.

    Returns:
        What was found.
    """
    stack = stack_trace_text(incident)
    logs = [str(line) for line in incident.get("logs") or [] if str(line).strip()]
    # An instruction to the model in the message ("cite PAY-408") is not evidence.
    message = without_instructions(str(incident.get("message") or ""))
    from_stack = parse_stack_trace(stack, patterns) if stack.strip() else ParsedEvidence()
    from_logs = parse_entries(logs, patterns) if logs else ParsedEvidence()
    from_message = parse_text(message, patterns) if message.strip() else ParsedEvidence()
    logs_speak = from_logs.level is not Level.INFO
    ranked = (
        (from_stack, bool(from_stack.exception_type)),
        (from_logs, logs_speak and _carries(from_logs)),
        (from_message, _carries(from_message)),
        (from_logs, from_logs.level in (Level.ERROR, Level.WARN)),
        (from_message, bool(from_message.causal_line)),
        (from_logs, bool(from_logs.causal_line)),
        (from_stack, bool(from_stack.causal_line)),
    )
    chosen = next((parsed for parsed, good in ranked if good), ParsedEvidence())
    parts = [chosen, *(p for p in (from_stack, from_logs, from_message) if p is not chosen)]
    source = {id(from_stack): "stack_trace", id(from_logs): "logs", id(from_message): "message"}
    return replace(
        chosen,
        source=source.get(id(chosen)),
        error_codes=tuple(unique(c for p in parts for c in p.error_codes)),
        http_statuses=tuple(unique(s for p in parts for s in p.http_statuses)),
        services=tuple(unique(s for p in parts for s in p.services)),
    )


def _carries(parsed: ParsedEvidence) -> bool:
    return bool(parsed.exception_type or parsed.error_codes or parsed.http_statuses)


def _pick_causal(facts: Sequence[RecordFacts]) -> RecordFacts | None:
    """The first causal record: errors carrying evidence, then errors, then warnings, ….

    A warning carrying no evidence comes after unlevelled records that carry some. Of the
    records at one level, one naming an exception or an error code comes first, then
    one with a server error status, then any status: in a busy log an ``ERROR search-api …
    query parse error -> 400`` a user caused comes before the checkout's ``ZeroDivisionError``,
    which is what failed.
    """

    def tiers(level: Level) -> list[list[RecordFacts]]:
        same = [f for f in facts if f.level is level]
        return [
            [f for f in same if f.exception_type or f.codes],
            [f for f in same if any(s >= 500 for s in f.statuses)],
            [f for f in same if f.carries_error],
            same,
        ]

    error, warn, unlevelled = tiers(Level.ERROR), tiers(Level.WARN), tiers(Level.NONE)
    # A warning that names nothing ("upstream response is buffered to a temporary file")
    # comes after an unlevelled record that does ("POST /api/chiller/v1/readings 502").
    order = [*error, *warn[:3], *unlevelled[:3], warn[3], unlevelled[3]]
    order.append([f for f in facts if f.carries_error])  # routine records, last
    return next((f for tier in order for f in tier), facts[0] if facts else None)


def _ordered(facts: Sequence[RecordFacts], causal: RecordFacts | None) -> list[RecordFacts]:
    """Causal first, then errors, warnings, lines without a level, then INFO noise."""
    rank = {Level.ERROR: 0, Level.WARN: 1, Level.NONE: 2, Level.INFO: 3}
    rest = sorted((f for f in facts if f is not causal), key=lambda f: rank[f.level])
    return ([causal] if causal else []) + rest


def _signature(causal: RecordFacts | None) -> str:
    if causal is None:
        return ""
    message = causal.exception_message or causal.message
    parts = [causal.exception_type or "", normalise(message)[:MAX_SIGNATURE_CHARS]]
    if causal.frame is not None:
        parts.append(f"{causal.frame.file}:{causal.frame.function}")
    parts.extend(causal.codes)
    parts.extend(str(s) for s in causal.statuses[:1])
    return " | ".join(p for p in parts if p)


def _evidence(facts: Sequence[RecordFacts], causal: RecordFacts | None) -> ParsedEvidence:
    if causal is None:
        return ParsedEvidence()
    ordered = _ordered(facts, causal)
    return ParsedEvidence(
        exception_type=causal.exception_type,
        exception_message=causal.exception_message,
        frame=causal.frame,
        error_codes=tuple(unique(c for f in ordered for c in f.codes)),
        http_statuses=tuple(unique(s for f in ordered for s in f.statuses)),
        services=tuple(unique(s for f in ordered for s in f.services)),
        causal_line=causal.line,
        signature=_signature(causal),
        format=causal.format,
        level=causal.level,
        causal_message=causal.message or None,
        trace=causal.trace,
    )
