"""Raw evidence parsing: find the causal error in tracebacks, JVM stack traces and log lines.

Pure functions, no I/O. Input is whatever an incident carries (a stack trace, log lines, a
message); output is a ``ParsedEvidence``: the exception, the deepest application frame, error
codes, HTTP error statuses, service names, the causal line and a ``signature`` in which volatile
parts (ids, timestamps, addresses, numbers) are normalised so repeats of one failure group
together.

Rules, in short:

* Python tracebacks print the root cause of a chain first ("During handling of the above
  exception…", "The above exception was the direct cause…"), so the first exception wins; its
  deepest application frame is the last frame outside site-packages and the standard library.
* JVM traces print the root cause last, so the last top-level ``Caused by:`` wins; its deepest
  application frame is the first ``at`` frame outside ``java.``, ``sun.``, ``jdk.`` and common
  framework packages.
* Logs: the first ERROR/FATAL/CRITICAL record carrying an exception, an error code or an HTTP
  error status; then the first ERROR record at all; then WARN; INFO and DEBUG are noise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache
from http import HTTPStatus
from typing import Any, TypeVar

from app.intake.settings import DEFAULT_ERROR_CODE_PATTERNS

_T = TypeVar("_T")

MAX_QUERY_MESSAGE_CHARS = 300
MAX_MESSAGE_CONTINUATION_LINES = 3
MAX_SIGNATURE_CHARS = 300
MAX_STACK_AND_LOGS_CHARS = 100_000


class EvidenceFormat(StrEnum):
    """Where the causal error was found."""

    PYTHON_TRACEBACK = "python_traceback"
    JAVA_STACK_TRACE = "java_stack_trace"
    JSON_LOG = "json_log"
    LOG = "log"
    TEXT = "text"
    EMPTY = "empty"


class Level(StrEnum):
    """Log severity, collapsed to what matters for picking the cause."""

    ERROR = "error"
    WARN = "warn"
    INFO = "info"
    NONE = "none"


@dataclass(frozen=True)
class Frame:
    """A stack frame: file, line (None when the runtime did not know it) and function."""

    file: str
    line: int | None
    function: str

    def __str__(self) -> str:
        line = "?" if self.line is None else str(self.line)
        return f"{self.file}:{line}:{self.function}"


@dataclass(frozen=True)
class ParsedEvidence:
    """What the parser found, causal part first.

    Attributes:
        exception_type: The root-cause exception type, e.g. ``requests.exceptions.ReadTimeout``.
        exception_message: Its message (first lines only).
        frame: The deepest application frame of the root cause.
        error_codes: Error codes found, those of the causal record first.
        http_statuses: HTTP error statuses (4xx/5xx) found, those of the causal record first.
        services: Service or logger names found, those of the causal record first.
        causal_line: The line (or exception line of a trace) judged causal.
        signature: A normalised fingerprint of the causal error, stable across repeats.
        format: Where the causal error was found.
        level: The causal record's level (a trace counts as an error).
        source: The incident field the causal error came from (``stack_trace``, ``logs``,
            ``message``); None when parsing raw text.
        causal_message: The causal record's message (no timestamp or level; a JSON log's
            message field).
        trace: The stack trace attached to the causal record, if any.
    """

    exception_type: str | None = None
    exception_message: str | None = None
    frame: Frame | None = None
    error_codes: tuple[str, ...] = ()
    http_statuses: tuple[int, ...] = ()
    services: tuple[str, ...] = ()
    causal_line: str | None = None
    signature: str = ""
    format: EvidenceFormat = EvidenceFormat.EMPTY
    level: Level = Level.NONE
    source: str | None = None
    causal_message: str | None = None
    trace: str | None = None

    def query_terms(self) -> str:
        """Extra text for the retrieval query: exception, message, error codes, status.

        Returns:
            Space-separated terms; empty when nothing was found.
        """
        # When the cause is the message itself, the query already holds it: add only what
        # the message does not say (codes and statuses found elsewhere).
        said = (self.causal_line or "") if self.source == "message" else ""
        parts: list[str] = []
        if self.exception_type and self.exception_type not in said:
            parts.append(self.exception_type)
        message = self.exception_message or self.causal_message
        if message and not said:
            parts.append(message[:MAX_QUERY_MESSAGE_CHARS])
        parts.extend(code for code in self.error_codes if code not in said)
        if self.http_statuses and str(self.http_statuses[0]) not in said:
            parts.append(status_text(self.http_statuses[0]))
        return " ".join(p for p in parts if p).strip()


# --- Patterns -----------------------------------------------------------------------------

_PY_TRACE_START = "Traceback (most recent call last):"
_PY_CHAIN_SEPARATORS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_PY_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
_PY_EXCEPTION_LINE_RE = re.compile(
    r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s?(?P<message>.*))?$"
)
_JAVA_HEADER_RE = re.compile(
    r'^\s*(?:Exception in thread "[^"]*"\s+)?'
    r"(?P<type>(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*)(?::\s*(?P<message>.*))?$"
)
_JAVA_CAUSED_BY_RE = re.compile(
    r"^Caused by:\s*(?P<type>[A-Za-z_$][\w$.]*)(?::\s*(?P<message>.*))?$"
)
_JAVA_FRAME_RE = re.compile(r"^\s*at\s+(?:[\w.$@-]*/)*(?P<func>[\w.$<>-]+)\((?P<location>[^)]*)\)")
_JAVA_MORE_RE = re.compile(r"^\s*\.\.\. \d+ (?:more|common frames omitted)")
_JAVA_SUPPRESSED_RE = re.compile(r"^\s+Suppressed:")

#: An exception type written inline in a log line.
_EXCEPTION_TYPE_RE = re.compile(
    r"(?<![\w.$])(?P<type>(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*?"
    r"(?:Error|Exception|Timeout|Exit|Interrupt|Fault))(?![\w$])(?::\s*(?P<message>.*))?"
)
#: Frames written inline: ``at pkg.Cls.m(File.java:77)``, ``(checkout_service.py:142 func)``.
_INLINE_JAVA_FRAME_RE = re.compile(
    r"\bat\s+(?P<func>[\w.$<>]+)\((?P<file>[\w$.-]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)"
)
_INLINE_FILE_FRAME_RE = re.compile(
    r"(?P<file>[\w./-]+\.(?:py|java|kt|go|js|ts|rb|cs|php)):(?P<line>\d+)(?:\s+(?P<func>\w+))?"
)
_INLINE_PY_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\w+)')

_ERROR_LEVELS = frozenset(
    {"ERROR", "ERR", "SEVERE", "FATAL", "CRITICAL", "CRIT", "PANIC", "EMERG", "ALERT"}
)
_WARN_LEVELS = frozenset({"WARN", "WARNING"})
_INFO_LEVELS = frozenset({"INFO", "NOTICE", "DEBUG", "TRACE", "FINE", "FINER", "FINEST"})
_ALL_LEVELS = "|".join(sorted(_ERROR_LEVELS | _WARN_LEVELS | _INFO_LEVELS, key=len, reverse=True))
_LEVEL_RE = re.compile(rf"(?<![\w-])(?P<level>{_ALL_LEVELS})(?![\w-])")
_LEVEL_LOWER_RE = re.compile(
    rf"(?:\[|\blevel=|\bseverity=|\blvl=)\"?(?P<level>(?i:{_ALL_LEVELS}))(?![\w-])"
)

_TIMESTAMP_PATTERNS = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
    r"\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?",
    r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}",
    r"\d{4}-\d{2}-\d{2}",
    r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)?",
)
_TIMESTAMP_RE = re.compile("|".join(rf"(?:{p})" for p in _TIMESTAMP_PATTERNS))
_LEADING_TIMESTAMP_RE = re.compile(rf"^\s*\[?(?:{_TIMESTAMP_RE.pattern})\]?")
_UUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")
_IP_RE = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b")
_HEX_RE = re.compile(
    r"\b(?:0x[0-9a-fA-F]+|(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{5,})\b"
)
#: Numbers, also with a unit glued on (``30000ms``, ``1.2s``, ``88%``).
_NUMBER_RE = re.compile(
    r"(?<![\w-])\d+(?:[.,]\d+)?(?=(?:ms|us|ns|s|m|h|d|k|kb|mb|gb|x|%)?(?![\w]))"
)
_SPACE_RE = re.compile(r"\s+")

_STATUS_PHRASES = "|".join(
    re.escape(s.phrase) for s in HTTPStatus if 400 <= s.value < 600 and s.phrase
)
_STATUS_RES = (
    re.compile(r"\bHTTP(?:/\d(?:\.\d)?)?\"?\s*(?P<code>[1-5]\d\d)\b"),
    re.compile(
        r"\b(?:status|status_code|statusCode|http_status|http\.status_code|code)"
        r"\"?\s*[=:]\s*\"?(?P<code>[1-5]\d\d)\b"
    ),
    re.compile(
        r"(?:->|=>|\breturned|\breturning|\bresponded(?: with)?|\breplied(?: with)?|"
        r"\banswered(?: with)?|\breceived|\brejected(?: with)?|\bwith status(?: code)?|"
        r"\bstatus(?: code)?)\s+\"?(?P<code>[1-5]\d\d)\b"
    ),
    re.compile(rf"\b(?P<code>[1-5]\d\d)\s+(?:{_STATUS_PHRASES})\b", re.IGNORECASE),
    re.compile(r"\b(?P<code>[45]\d\d)\s+(?:for|from|on|error|response)\b"),
)

_SERVICE_RES = (
    re.compile(r"\b(?:service|svc|service\.name|app|component)\s*[=:]\s*\"?(?P<name>[\w.-]+)"),
    re.compile(r"\[(?P<name>[a-z][\w]*(?:[-.][a-z0-9][\w]*)+)\]"),
)
_LOGGER_TOKEN_RE = re.compile(r"^[a-z][a-z0-9_]*(?:[-.][a-z0-9_]+)+$")
#: Thread names that look like logger names: ``nio-8080-exec-3``, ``pool-2-thread-1``.
_THREAD_NAME_RE = re.compile(r"(?:^|-)(?:nio|exec|pool|thread|worker|task|scheduling)-\d")
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

_PY_LIBRARY_MARKERS = ("site-packages", "dist-packages", "<frozen ", "/lib/python", "\\lib\\")
_JAVA_LIBRARY_PREFIXES = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "jakarta.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "org.springframework.",
    "org.apache.",
    "org.eclipse.jetty.",
    "org.hibernate.",
    "org.slf4j.",
    "ch.qos.logback.",
    "io.netty.",
    "io.grpc.",
    "io.micrometer.",
    "reactor.",
    "okhttp3.",
    "okio.",
    "retrofit2.",
    "feign.",
    "com.fasterxml.",
    "com.zaxxer.hikari.",
)


@lru_cache(maxsize=32)
def compile_code_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile error-code patterns once.

    Args:
        patterns: Regular expressions; each match (group 0) is an error code.

    Returns:
        The compiled patterns.
    """
    return tuple(re.compile(p) for p in patterns)


def find_error_codes(text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS) -> list[str]:
    """Error codes in ``text``, in order of appearance, without repeats.

    Args:
        text: Any text.
        patterns: Error-code regular expressions.

    Returns:
        The codes found.
    """
    found: list[tuple[int, str]] = []
    for pattern in compile_code_patterns(tuple(patterns)):
        found.extend((m.start(), m.group(0)) for m in pattern.finditer(text))
    return _unique(code for _, code in sorted(found))


def find_http_statuses(text: str) -> list[int]:
    """HTTP error statuses (4xx and 5xx) mentioned in ``text``, in order, without repeats.

    Args:
        text: Any text.

    Returns:
        The statuses found.
    """
    found: list[tuple[int, int]] = []
    for pattern in _STATUS_RES:
        for match in pattern.finditer(text):
            code = int(match.group("code"))
            if 400 <= code < 600:
                found.append((match.start("code"), code))
    return _unique(code for _, code in sorted(found))


def status_text(code: int) -> str:
    """``HTTP 503 Service Unavailable`` (the phrase when the code is a known one).

    Args:
        code: An HTTP status code.

    Returns:
        The status as text.
    """
    try:
        return f"HTTP {code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


def normalise(text: str) -> str:
    """Replace volatile parts (uuids, timestamps, IPs, hex ids, numbers) with placeholders.

    Error codes such as ``PAY-408`` stay intact: numbers joined to a word by ``-`` are kept.

    Args:
        text: Any text.

    Returns:
        The normalised text, white space collapsed.
    """
    text = _UUID_RE.sub("<uuid>", text)
    text = _TIMESTAMP_RE.sub("<ts>", text)
    text = _IP_RE.sub("<ip>", text)
    text = _HEX_RE.sub("<hex>", text)
    text = _NUMBER_RE.sub("<n>", text)
    return _SPACE_RE.sub(" ", text).strip()


def clean_line(line: str) -> str:
    """A log line without its leading timestamp and level, white space collapsed.

    Args:
        line: One log line.

    Returns:
        The line's message part.
    """
    text = _LEADING_TIMESTAMP_RE.sub("", line)
    match = _LEVEL_RE.search(text) or _LEVEL_LOWER_RE.search(text)
    if match and match.start() < 60:
        start, end = match.span()
        if text[match.start("level") - 1 : match.start("level")] == "[":
            start = match.start("level") - 1
            end += 1 if text[end : end + 1] == "]" else 0
        text = f"{text[:start]} {text[end:]}"
    text = _SPACE_RE.sub(" ", text).strip(" :-|")
    return _SPRING_PREFIX_RE.sub("", text)


def level_of(line: str) -> Level:
    """The severity a log line declares, ``Level.NONE`` when it declares none.

    Args:
        line: One log line.

    Returns:
        The collapsed level.
    """
    match = _LEVEL_RE.search(line[:80]) or _LEVEL_LOWER_RE.search(line[:80])
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


# --- Traces -------------------------------------------------------------------------------


@dataclass
class _Block:
    """One exception of a chain: its frames (as printed) and its exception line."""

    frames: list[Frame] = field(default_factory=list)
    exception_type: str | None = None
    message_lines: list[str] = field(default_factory=list)

    @property
    def message(self) -> str | None:
        text = " ".join(line.strip() for line in self.message_lines if line.strip())
        return text or None


@dataclass(frozen=True)
class _Trace:
    """A parsed trace: the root-cause exception and its deepest application frame."""

    format: EvidenceFormat
    exception_type: str | None
    exception_message: str | None
    frame: Frame | None
    text: str


def _is_python_library(path: str) -> bool:
    return any(marker in path for marker in _PY_LIBRARY_MARKERS) or path.startswith("<")


def _is_java_library(function: str) -> bool:
    return function.startswith(_JAVA_LIBRARY_PREFIXES)


def parse_python_traceback(text: str) -> _Trace | None:
    """The root cause of a (possibly chained) Python traceback.

    Args:
        text: Traceback text; a bare ``Type: message`` line without frames also counts.

    Returns:
        The parsed trace, or None when ``text`` holds no exception.
    """
    blocks: list[_Block] = []
    current: _Block | None = None
    in_message = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if _PY_TRACE_START in raw:
            current, in_message = _Block(), False
            blocks.append(current)
            continue
        if stripped in _PY_CHAIN_SEPARATORS:
            current, in_message = None, False
            continue
        if not stripped:
            in_message = False
            continue
        if in_message and current is not None:
            if len(current.message_lines) <= MAX_MESSAGE_CONTINUATION_LINES:
                current.message_lines.append(stripped)
            continue
        frame_match = _PY_FRAME_RE.match(raw)
        if frame_match and current is not None:
            function = (frame_match["func"] or "?").strip()
            current.frames.append(Frame(frame_match["file"], int(frame_match["line"]), function))
            continue
        if raw[:1].isspace():
            continue  # source lines under frames, carets
        exception = _PY_EXCEPTION_LINE_RE.match(stripped)
        if exception is None:
            continue
        if current is None or current.exception_type is not None:
            if not _looks_like_exception(exception["type"]):
                continue
            # An exception line without a "Traceback" header (a logged error, a bare trace).
            current = _Block()
            blocks.append(current)
        current.exception_type = exception["type"]
        if exception["message"]:
            current.message_lines.append(exception["message"].strip())
        in_message = True
    blocks = [b for b in blocks if b.exception_type]
    if not blocks:
        return None
    root = blocks[0]  # Python prints the original exception of a chain first.
    frame = _last_app_frame(root.frames, python=True)
    for later in blocks[1:]:
        frame = frame or _last_app_frame(later.frames, python=True)
    return _Trace(
        EvidenceFormat.PYTHON_TRACEBACK, root.exception_type, root.message, frame, text.strip()
    )


def _looks_like_exception(name: str) -> bool:
    return bool(_EXCEPTION_TYPE_RE.fullmatch(name)) or name.rsplit(".", 1)[-1] in {
        "KeyboardInterrupt",
        "StopIteration",
        "SystemExit",
        "Warning",
    }


def _last_app_frame(frames: Sequence[Frame], *, python: bool) -> Frame | None:
    if python:
        candidates = [f for f in frames if not _is_python_library(f.file)]
        return candidates[-1] if candidates else None
    for frame in frames:
        if not _is_java_library(frame.function):
            return frame
    return None


def _java_frame(line: str) -> Frame | None:
    match = _JAVA_FRAME_RE.match(line)
    if not match:
        return None
    location = match["location"]
    file, _, number = location.partition(":")
    return Frame(file or location, int(number) if number.isdigit() else None, match["func"])


def parse_java_stack_trace(text: str) -> _Trace | None:
    """The root cause of a JVM stack trace: the last top-level ``Caused by:``.

    Args:
        text: Stack trace text (``Exception in thread…``, ``at …`` frames, ``Caused by:``).

    Returns:
        The parsed trace, or None when ``text`` holds no JVM exception.
    """
    blocks: list[_Block] = []
    suppressed = False
    for raw in text.splitlines():
        caused = _JAVA_CAUSED_BY_RE.match(raw)
        if caused:
            blocks.append(_Block(exception_type=caused["type"]))
            if caused["message"]:
                blocks[-1].message_lines.append(caused["message"])
            suppressed = False
            continue
        if _JAVA_SUPPRESSED_RE.match(raw):
            suppressed = True  # suppressed exceptions are not the cause
            continue
        frame = _java_frame(raw)
        if frame is not None:
            if blocks and not suppressed:
                blocks[-1].frames.append(frame)
            continue
        header = _JAVA_HEADER_RE.match(raw)
        if header and not blocks and not raw[:1].isspace():
            blocks.append(_Block(exception_type=header["type"]))
            if header["message"]:
                blocks[-1].message_lines.append(header["message"])
    if not blocks or not any(b.frames for b in blocks):
        return None
    root = blocks[-1]
    frame = _last_app_frame(root.frames, python=False)
    for outer in reversed(blocks[:-1]):
        frame = frame or _last_app_frame(outer.frames, python=False)
    return _Trace(
        EvidenceFormat.JAVA_STACK_TRACE, root.exception_type, root.message, frame, text.strip()
    )


def _python_trace_end(lines: Sequence[str], start: int) -> int:
    """Index just past the Python traceback (with its chain) starting at ``start``."""
    i, in_message, message_lines = start + 1, False, 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and (
                lines[j].strip() in _PY_CHAIN_SEPARATORS or _PY_TRACE_START in lines[j]
            ):
                i, in_message = j, False
                continue
            break
        if stripped in _PY_CHAIN_SEPARATORS or _PY_TRACE_START in raw:
            i, in_message = i + 1, False
            continue
        if raw[:1].isspace():
            i += 1
            continue
        if not in_message:
            in_message, message_lines = True, 0
            i += 1
            continue
        if _is_record_start(raw) or message_lines >= MAX_MESSAGE_CONTINUATION_LINES:
            break
        message_lines += 1
        i += 1
    return i


def _java_trace_end(lines: Sequence[str], start: int) -> int:
    """Index just past the JVM stack trace starting at ``start``."""
    i = start + 1
    while i < len(lines):
        raw = lines[i]
        if (
            _JAVA_FRAME_RE.match(raw)
            or _JAVA_MORE_RE.match(raw)
            or _JAVA_CAUSED_BY_RE.match(raw.strip())
            or _JAVA_SUPPRESSED_RE.match(raw)
        ):
            i += 1
            continue
        break
    return i


def _is_java_trace_start(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    if not (_JAVA_HEADER_RE.match(line) or _JAVA_CAUSED_BY_RE.match(line.strip())):
        return False
    return i + 1 < len(lines) and bool(_JAVA_FRAME_RE.match(lines[i + 1]))


def _is_record_start(line: str) -> bool:
    """Whether ``line`` starts a new log record (timestamp, level or JSON object first)."""
    stripped = line.lstrip()
    if stripped.startswith("{") or _LEADING_TIMESTAMP_RE.match(line):
        return True
    match = _LEVEL_RE.search(line[:60]) or _LEVEL_LOWER_RE.search(line[:60])
    return bool(match)


# --- Records ------------------------------------------------------------------------------


@dataclass
class _Record:
    """One log record: its line, and the trace printed under it if any."""

    line: str
    trace: _Trace | None = None


@dataclass(frozen=True)
class _Facts:
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
        return bool(self.exception_type or self.codes or self.statuses)


def _split_records(entries: Iterable[str]) -> list[_Record]:
    """Log records of ``entries``; each entry starts a record, traces attach to the line above.

    Args:
        entries: Log entries (a file's text is one entry; a list of log lines, one each).

    Returns:
        The records in order.
    """
    records: list[_Record] = []
    for entry in entries:
        lines = entry.splitlines()
        i, previous_end = 0, -1
        while i < len(lines):
            raw = lines[i]
            trace: _Trace | None = None
            end = i + 1
            if _PY_TRACE_START in raw:
                end = _python_trace_end(lines, i)
                trace = parse_python_traceback("\n".join(lines[i:end]))
            elif _is_java_trace_start(lines, i):
                end = _java_trace_end(lines, i)
                trace = parse_java_stack_trace("\n".join(lines[i:end]))
            if trace is not None:
                # A trace printed right under a log line belongs to that line.
                follows = previous_end == i and bool(records) and records[-1].trace is None
                if follows and not _is_record_start(raw):
                    records[-1].trace = trace
                else:
                    records.append(_Record(_trace_line(trace), trace))
                i = previous_end = end
                continue
            if raw.strip():
                records.append(_Record(raw.rstrip()))
                previous_end = i + 1
            i += 1
    return records


def _trace_line(trace: _Trace) -> str:
    if not trace.exception_type:
        return trace.text.splitlines()[0] if trace.text else ""
    if trace.exception_message:
        return f"{trace.exception_type}: {trace.exception_message}"
    return trace.exception_type


def _json_object(line: str) -> dict[str, Any] | None:
    start = line.find("{")
    if start < 0 or not line.rstrip().endswith("}"):
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


def _level_from_name(name: str) -> Level:
    upper = name.upper()
    if upper in _ERROR_LEVELS:
        return Level.ERROR
    if upper in _WARN_LEVELS:
        return Level.WARN
    if upper in _INFO_LEVELS:
        return Level.INFO
    return Level.NONE


def _services_in(line: str) -> list[str]:
    found = [m["name"] for pattern in _SERVICE_RES for m in pattern.finditer(line)]
    # A logger name right before or after the level: "pos-api ERROR …", "ERROR payment-client …".
    text = _LEADING_TIMESTAMP_RE.sub("", line)
    level = _LEVEL_RE.search(text[:80])
    if level:
        before = text[: level.start()].split()
        after = text[level.end() :].split()
        for token in (before[-1:] or []) + (after[:1] or []):
            token = token.strip("[]():,")
            if _LOGGER_TOKEN_RE.match(token) and not _IP_RE.fullmatch(token):
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


def _facts(record: _Record, patterns: Sequence[str]) -> _Facts:
    """Read one record."""
    line = record.line
    data = _json_object(line)
    trace = record.trace
    level = level_of(line)
    message = clean_line(line)
    services = _services_in(line)
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
            for key in _JSON_TRACE_KEYS:
                value = _json_get(data, key)
                if isinstance(value, dict):
                    value = (
                        value.get("stack_trace")
                        or value.get("stack")
                        or (
                            f"{value.get('type')}: {value.get('message')}"
                            if value.get("type")
                            else None
                        )
                    )
                if isinstance(value, str) and value.strip():
                    trace = parse_python_traceback(value) or parse_java_stack_trace(value)
                    if trace is None and (inline := _EXCEPTION_TYPE_RE.search(value)):
                        trace = _Trace(
                            EvidenceFormat.JSON_LOG, inline["type"], inline["message"], None, value
                        )
                    if trace is not None:
                        break
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
        inline = _EXCEPTION_TYPE_RE.search(message)
        exception_type = inline["type"] if inline else None
        exception_message = (inline["message"] or "").strip() or None if inline else None
        frame = _inline_frame(line)
    return _Facts(
        line=line,
        level=level,
        format=fmt,
        message=message,
        exception_type=exception_type,
        exception_message=exception_message,
        frame=frame,
        codes=tuple(find_error_codes(scan, patterns)),
        statuses=tuple(find_http_statuses(scan)),
        services=tuple(_unique(services)),
        trace=trace.text if trace is not None else None,
    )


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


def _pick_causal(facts: Sequence[_Facts]) -> _Facts | None:
    """The first causal record: errors carrying evidence, then errors, then warnings, …."""
    for level in (Level.ERROR, Level.WARN, Level.NONE):
        same = [f for f in facts if f.level is level]
        for candidate in (*[f for f in same if f.carries_error], *same):
            return candidate
    carrying = [f for f in facts if f.carries_error]
    return carrying[0] if carrying else (facts[0] if facts else None)


def _ordered(facts: Sequence[_Facts], causal: _Facts | None) -> list[_Facts]:
    """Causal first, then errors, warnings, lines without a level, then INFO noise."""
    rank = {Level.ERROR: 0, Level.WARN: 1, Level.NONE: 2, Level.INFO: 3}
    rest = sorted((f for f in facts if f is not causal), key=lambda f: rank[f.level])
    return ([causal] if causal else []) + rest


def _signature(causal: _Facts | None) -> str:
    if causal is None:
        return ""
    message = causal.exception_message or causal.message
    parts = [causal.exception_type or "", normalise(message)[:MAX_SIGNATURE_CHARS]]
    if causal.frame is not None:
        parts.append(f"{causal.frame.file}:{causal.frame.function}")
    parts.extend(causal.codes)
    parts.extend(str(s) for s in causal.statuses[:1])
    return " | ".join(p for p in parts if p)


def _evidence(facts: Sequence[_Facts], causal: _Facts | None) -> ParsedEvidence:
    if causal is None:
        return ParsedEvidence()
    ordered = _ordered(facts, causal)
    return ParsedEvidence(
        exception_type=causal.exception_type,
        exception_message=causal.exception_message,
        frame=causal.frame,
        error_codes=tuple(_unique(c for f in ordered for c in f.codes)),
        http_statuses=tuple(_unique(s for f in ordered for s in f.statuses)),
        services=tuple(_unique(s for f in ordered for s in f.services)),
        causal_line=causal.line,
        signature=_signature(causal),
        format=causal.format,
        level=causal.level,
        causal_message=causal.message or None,
        trace=causal.trace,
    )


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
    facts = [_facts(r, patterns) for r in _split_records(entries)]
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
    record = _Record(_trace_line(trace), trace)
    facts = _facts(record, patterns)
    return _evidence([facts], facts)


def parse_incident(
    incident: dict[str, Any], patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
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
    stack = str(incident.get("stack_trace") or "")
    logs = [str(line) for line in incident.get("logs") or [] if str(line).strip()]
    message = str(incident.get("message") or "")
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
        error_codes=tuple(_unique(c for p in parts for c in p.error_codes)),
        http_statuses=tuple(_unique(s for p in parts for s in p.http_statuses)),
        services=tuple(_unique(s for p in parts for s in p.services)),
    )


def _carries(parsed: ParsedEvidence) -> bool:
    return bool(parsed.exception_type or parsed.error_codes or parsed.http_statuses)


def enriched_query(
    incident: dict[str, Any], patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> str:
    """The rag node's query plus the parsed evidence's terms.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        patterns: Error-code regular expressions.

    Returns:
        ``retrieval_query(incident) + " " + parse_incident(incident).query_terms()``, stripped.
    """
    from app.graph.nodes.rag import retrieval_query

    return f"{retrieval_query(incident)} {parse_incident(incident, patterns).query_terms()}".strip()


def enriched_incident_query(
    incident: dict[str, Any],
    patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS,
    max_chars: int = 2000,
) -> str:
    """``incident_query`` (head, raw stack trace, log lines) with the parsed terms after the head.

    The terms go right after ``error_code event message`` so the length cap never cuts them,
    and so the causal line leads the noisy lines that follow.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        patterns: Error-code regular expressions.
        max_chars: Maximum length of the query.

    Returns:
        The query text.
    """
    from app.graph.nodes.rag import retrieval_query
    from app.rag.engine import incident_query

    head = retrieval_query(incident)
    full = incident_query(incident, max_chars=len(head) + MAX_STACK_AND_LOGS_CHARS)
    rest = full[len(head) :].lstrip("\n") if full.startswith(head) else full
    first = f"{head} {parse_incident(incident, patterns).query_terms()}".strip()
    return "\n".join(part for part in (first, rest) if part)[:max_chars]


def _unique(items: Iterable[_T]) -> list[_T]:
    seen: set[_T] = set()
    out: list[_T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
