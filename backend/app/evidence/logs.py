"""Log records: split log text into records and read what each one says.

A record is one log line (plain or JSON) with the stack trace printed right under it, if any.
``read_record`` turns a record into ``RecordFacts``: its level, message without timestamp and
level, exception (from the attached trace, a JSON error field or an inline ``SomeError:``),
frame, error codes, HTTP error statuses and service or logger names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.evidence.java_trace import is_java_trace_start, java_trace_end, parse_java_stack_trace
from app.evidence.model import EvidenceFormat, Frame, Level, Trace
from app.evidence.patterns import (
    ERROR_LEVELS,
    EXCEPTION_TYPE_RE,
    INFO_LEVELS,
    IP_RE,
    LEADING_TIMESTAMP_RE,
    LEVEL_LOWER_RE,
    LEVEL_RE,
    SPACE_RE,
    WARN_LEVELS,
    find_error_codes,
    find_http_statuses,
    is_record_start,
    unique,
)
from app.evidence.python_trace import PY_TRACE_START, parse_python_traceback, python_trace_end

#: Frames written inline: ``at pkg.Cls.m(File.java:77)``, ``(checkout_service.py:142 func)``.
_INLINE_JAVA_FRAME_RE = re.compile(
    r"\bat\s+(?P<func>[\w.$<>]+)\((?P<file>[\w$.-]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)"
)
_INLINE_FILE_FRAME_RE = re.compile(
    r"(?P<file>[\w./-]+\.(?:py|java|kt|go|js|ts|rb|cs|php)):(?P<line>\d+)(?:\s+(?P<func>\w+))?"
)
_INLINE_PY_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\w+)')

_SERVICE_RES = (
    re.compile(r"\b(?:service|svc|service\.name|app|component)\s*[=:]\s*\"?(?P<name>[\w.-]+)"),
    re.compile(r"\[(?P<name>[a-z][\w]*(?:[-.][a-z0-9][\w]*)+)\]"),
)
_LOGGER_TOKEN_RE = re.compile(r"^[a-z][a-z0-9_]*(?:[-.][a-z0-9_]+)+$")
#: An access-log line led by the service that served it: "edi-gateway POST /asn 422".
_ACCESS_LINE_RE = re.compile(
    r"^\[?(?P<name>[a-z][a-z0-9_]*(?:-[a-z0-9_]+)+)\]?:?\s+"
    r"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/"
)
#: Thread names that look like logger names: ``nio-8080-exec-3``, ``pool-2-thread-1``.
_THREAD_NAME_RE = re.compile(
    r"^(?:(?:http-)?nio-\d+-|pool-\d+-|[\w.]*commonpool-)?"
    r"(?:nio|exec|pool|thread|worker|task|scheduling)-\d",
    re.IGNORECASE,
)
#: Spring Boot's ``PID --- [thread] logger :`` prefix.
_SPRING_PREFIX_RE = re.compile(r"^\d+ --- \[[^\]]*\]\s+[\w.$]+\s*:\s*")

_JSON_MESSAGE_KEYS = ("message", "msg", "@message", "event", "log")
_JSON_LEVEL_KEYS = ("level", "severity", "levelname", "log.level", "lvl", "loglevel")
_JSON_SERVICE_KEYS = (
    "service",
    "service.name",
    "service_name",
    "app",
    "application",
    "logger",
    "logger_name",
    "component",
)
_JSON_TRACE_KEYS = (
    "exc_info",
    "exception",
    "stack_trace",
    "stacktrace",
    "error.stack_trace",
    "traceback",
    "error",
    "err",
)
_JSON_CODE_KEYS = ("error_code", "errorCode", "code")


@dataclass
class Record:
    """One log record: its line, and the trace printed under it if any."""

    line: str
    trace: Trace | None = None


@dataclass(frozen=True)
class RecordFacts:
    """What one record says."""

    line: str
    level: Level
    format: EvidenceFormat
    message: str
    exception_type: str | None
    exception_message: str | None
    frame: Frame | None
    codes: tuple[str, ...]
    statuses: tuple[int, ...]
    services: tuple[str, ...]
    trace: str | None = None

    @property
    def carries_error(self) -> bool:
        """Whether the record names an exception, an error code or an HTTP error status."""
        return bool(self.exception_type or self.codes or self.statuses)


def clean_line(line: str) -> str:
    """A log line without its leading timestamp and level, white space collapsed.

    Args:
        line: One log line.

    Returns:
        The line's message part.
    """
    text = LEADING_TIMESTAMP_RE.sub("", line)
    match = LEVEL_RE.search(text) or LEVEL_LOWER_RE.search(text)
    if match and match.start() < 60:
        start, end = match.span()
        if text[match.start("level") - 1 : match.start("level")] == "[":
            start = match.start("level") - 1
            end += 1 if text[end : end + 1] == "]" else 0
        text = f"{text[:start]} {text[end:]}"
    text = SPACE_RE.sub(" ", text).strip(" :-|")
    return _SPRING_PREFIX_RE.sub("", text)


def level_of(line: str) -> Level:
    """The severity a log line declares, ``Level.NONE`` when it declares none.

    Args:
        line: One log line.

    Returns:
        The collapsed level.
    """
    match = LEVEL_RE.search(line[:80]) or LEVEL_LOWER_RE.search(line[:80])
    if not match:
        return Level.NONE
    return _level_from_name(match.group("level"))


def record_level(line: str) -> Level:
    """The level of a log line, reading a JSON line's level field.

    Args:
        line: One log line (plain or JSON).

    Returns:
        The collapsed level.
    """
    data = _json_object(line)
    if data is None:
        return level_of(line)
    value = next((_json_get(data, k) for k in _JSON_LEVEL_KEYS if _json_get(data, k)), "")
    return _level_from_name(str(value)) if value else Level.NONE


def split_records(entries: Iterable[str]) -> list[Record]:
    """Log records of ``entries``; each entry starts a record, traces attach to the line above.

    Args:
        entries: Log entries (a file's text is one entry; a list of log lines, one each).

    Returns:
        The records in order.
    """
    records: list[Record] = []
    for entry in entries:
        lines = entry.splitlines()
        i, previous_end = 0, -1
        while i < len(lines):
            raw = lines[i]
            trace: Trace | None = None
            end = i + 1
            if PY_TRACE_START in raw:
                end = python_trace_end(lines, i)
                trace = parse_python_traceback("\n".join(lines[i:end]))
            elif is_java_trace_start(lines, i):
                end = java_trace_end(lines, i)
                trace = parse_java_stack_trace("\n".join(lines[i:end]))
            if trace is not None:
                # A trace printed right under a log line belongs to that line.
                follows = previous_end == i and bool(records) and records[-1].trace is None
                if follows and not is_record_start(raw):
                    records[-1].trace = trace
                else:
                    records.append(Record(trace_line(trace), trace))
                i = previous_end = end
                continue
            if raw.strip():
                records.append(Record(raw.rstrip()))
                previous_end = i + 1
            i += 1
    return records


def trace_line(trace: Trace) -> str:
    """The line a trace stands for: ``Type: message``, or its first line.

    Args:
        trace: A parsed trace.

    Returns:
        The line.
    """
    if not trace.exception_type:
        return trace.text.splitlines()[0] if trace.text else ""
    if trace.exception_message:
        return f"{trace.exception_type}: {trace.exception_message}"
    return trace.exception_type


def read_record(record: Record, patterns: Sequence[str]) -> RecordFacts:
    """Read one record: level, message, exception, frame, codes, statuses, services.

    Args:
        record: A log record.
        patterns: Error-code regular expressions.

    Returns:
        What the record says.
    """
    line = record.line
    data = _json_object(line)
    trace = record.trace
    level = level_of(line)
    message = clean_line(line)
    services = services_in(line)
    fmt = EvidenceFormat.LOG if level is not Level.NONE else EvidenceFormat.TEXT
    scan = line
    if data is not None:
        fmt = EvidenceFormat.JSON_LOG
        level = record_level(line)
        message = str(
            next((_json_get(data, k) for k in _JSON_MESSAGE_KEYS if _json_get(data, k)), "")
        )
        services = [
            str(v)
            for k in _JSON_SERVICE_KEYS
            if isinstance(v := _json_get(data, k), str | int) and str(v).strip()
        ]
        scan = " ".join(_json_strings(data))
        if trace is None:
            trace = _json_trace(data)
        for key in _JSON_CODE_KEYS:
            value = _json_get(data, key)
            if isinstance(value, str) and find_error_codes(value, patterns):
                scan = f"{value} {scan}"
    if trace is not None:
        exception_type, exception_message = trace.exception_type, trace.exception_message
        frame = trace.frame
        if data is None:
            fmt = trace.format
        if level is Level.NONE:
            level = Level.ERROR  # a trace is an error whatever the line says
        scan = f"{scan}\n{trace.text}"
    else:
        inline = EXCEPTION_TYPE_RE.search(message)
        exception_type = inline["type"] if inline else None
        exception_message = (inline["message"] or "").strip() or None if inline else None
        frame = _inline_frame(line)
    return RecordFacts(
        line=line,
        level=level,
        format=fmt,
        message=message,
        exception_type=exception_type,
        exception_message=exception_message,
        frame=frame,
        codes=tuple(find_error_codes(scan, patterns)),
        statuses=tuple(find_http_statuses(scan)),
        services=tuple(unique(services)),
        trace=trace.text if trace is not None else None,
    )


def _json_trace(data: dict[str, Any]) -> Trace | None:
    """The exception a JSON log record carries in one of its error fields."""
    for key in _JSON_TRACE_KEYS:
        value = _json_get(data, key)
        if isinstance(value, dict):
            value = (
                value.get("stack_trace")
                or value.get("stack")
                or (f"{value.get('type')}: {value.get('message')}" if value.get("type") else None)
            )
        if isinstance(value, str) and value.strip():
            trace = parse_python_traceback(value) or parse_java_stack_trace(value)
            if trace is None and (inline := EXCEPTION_TYPE_RE.search(value)):
                trace = Trace(
                    EvidenceFormat.JSON_LOG, inline["type"], inline["message"], None, value
                )
            if trace is not None:
                return trace
    return None


def _json_object(line: str) -> dict[str, Any] | None:
    """The JSON object a JSON log line holds; None for a plain line, even one ending in JSON.

    ``WARN POST /pos/v1/sales 422 {"error": "…"}`` is a plain line whose body is JSON: its level
    and words come before the object, and reading it as a JSON record would lose both.
    """
    start = line.find("{")
    if start < 0 or not line.rstrip().endswith("}"):
        return None
    if level_of(line[:start]) is not Level.NONE:
        return None
    try:
        value = json.loads(line[start:])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _json_get(data: dict[str, Any], key: str) -> Any:
    if key in data:
        return data[key]
    head, dot, rest = key.partition(".")
    if dot and isinstance(data.get(head), dict):
        return _json_get(data[head], rest)
    return None


def _json_strings(data: Any) -> list[str]:
    if isinstance(data, dict):
        out: list[str] = []
        for key, value in data.items():
            if isinstance(value, int) and "status" in str(key).lower():
                out.append(f"status={value}")
            else:
                out.extend(_json_strings(value))
        return out
    if isinstance(data, list):
        return [s for item in data for s in _json_strings(item)]
    return [data] if isinstance(data, str) else []


def _level_from_name(name: str) -> Level:
    upper = name.upper()
    if upper in ERROR_LEVELS:
        return Level.ERROR
    if upper in WARN_LEVELS:
        return Level.WARN
    if upper in INFO_LEVELS:
        return Level.INFO
    return Level.NONE


def serving_service(line: str) -> str | None:
    """The service an access-log line says served the request ("edi-gateway POST /asn 422")."""
    return _served(LEADING_TIMESTAMP_RE.sub("", line))


def _served(text: str) -> str | None:
    access = _ACCESS_LINE_RE.match(text)
    return access["name"] if access else None


def services_in(line: str) -> list[str]:
    """Service or logger names in a log line.

    Labels (``service=…``), a bracketed prefix, the logger beside the level, or the service
    leading an access-log line.
    """
    found = [m["name"] for pattern in _SERVICE_RES for m in pattern.finditer(line)]
    # A logger name right before or after the level: "pos-api ERROR …", "ERROR payment-client …".
    text = LEADING_TIMESTAMP_RE.sub("", line)
    served = _served(text)
    if served:
        found.append(served)
    level = LEVEL_RE.search(text[:80])
    if level:
        before = text[: level.start()].split()
        after = text[level.end() :].split()
        for token in (before[-1:] or []) + (after[:1] or []):
            token = token.strip("[]():,")
            if _LOGGER_TOKEN_RE.match(token) and not IP_RE.fullmatch(token):
                found.append(token)
    return [s for s in found if not s.isdigit() and not _THREAD_NAME_RE.search(s)]


def _inline_frame(line: str) -> Frame | None:
    match = _INLINE_JAVA_FRAME_RE.search(line) or _INLINE_PY_FRAME_RE.search(line)
    if match:
        return Frame(match["file"], int(match["line"]), match["func"])
    match = _INLINE_FILE_FRAME_RE.search(line)
    if match:
        return Frame(match["file"], int(match["line"]), match["func"] or "?")
    return None
