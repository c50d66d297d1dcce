"""What evidence parsing returns: the causal error of an incident and where it was found."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


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


@dataclass(frozen=True)
class Trace:
    """A parsed stack trace: the root-cause exception and its deepest application frame.

    Attributes:
        format: ``PYTHON_TRACEBACK``, ``JAVA_STACK_TRACE`` or ``JSON_LOG`` (an exception
            written as a JSON log's error field).
        exception_type: The root-cause exception type.
        exception_message: Its message.
        frame: Its deepest application frame, if any.
        text: The trace as given, stripped.
    """

    format: EvidenceFormat
    exception_type: str | None
    exception_message: str | None
    frame: Frame | None
    text: str


@dataclass
class ExceptionBlock:
    """One exception of a chain while a trace is read: its frames as printed, its exception line."""

    frames: list[Frame] = field(default_factory=list)
    exception_type: str | None = None
    message_lines: list[str] = field(default_factory=list)

    @property
    def message(self) -> str | None:
        """The message lines joined by spaces; None when there are none."""
        text = " ".join(line.strip() for line in self.message_lines if line.strip())
        return text or None
