"""Logging: one handler and one format for the app's loggers and uvicorn's, JSON or console.

``RCA_LOG_FORMAT`` chooses: ``json`` (one object per line, for collectors), ``console`` (aligned
lines a person reads in a terminal) or ``auto`` (the default: console when the log stream, stderr,
is a terminal, JSON otherwise). Every line carries the id of the request being served, if any.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Literal, TextIO

#: The id of the request being served (set by the request-id middleware).
request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)

LogFormat = Literal["auto", "json", "console"]

#: uvicorn's loggers; ``uvicorn.error`` propagates to ``uvicorn``.
UVICORN_LOGGERS = ("uvicorn", "uvicorn.access")


class JsonFormatter(logging.Formatter):
    """Render a log record as a JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON; exceptions go in ``exc_info``."""
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


class ConsoleFormatter(logging.Formatter):
    """Render a log record as one aligned line: time, level, logger, message, request id."""

    def format(self, record: logging.LogRecord) -> str:
        """``HH:MM:SS.mmm LEVEL logger  message [request_id=…]``, then any traceback."""
        moment = datetime.fromtimestamp(record.created, UTC)
        stamp = moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        line = f"{stamp} {record.levelname:<7} {record.name:<24} {record.getMessage()}"
        request_id = request_id_var.get()
        if request_id:
            line += f"  [request_id={request_id}]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class OwnLinesFilter(logging.Filter):
    """Our loggers and uvicorn's at their own levels; other libraries' at WARNING and above.

    Some libraries set DEBUG on their own loggers; without this, a root handler would print it.
    """

    OWN = ("app", *UVICORN_LOGGERS)

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether the record is printed."""
        own = any(record.name == n or record.name.startswith(n + ".") for n in self.OWN)
        return own or record.levelno >= logging.WARNING


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time of each record.

    Test runners and ``rca mcp`` (whose stdout is the protocol) swap the standard streams; a
    handler holding the stream it was built with would write to a closed or wrong file.
    """

    def __init__(self) -> None:
        super().__init__()
        self.addFilter(OwnLinesFilter())

    @property
    def stream(self) -> TextIO:
        """The current standard error."""
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        """Ignored: the stream is always the current standard error."""


def resolve_format(
    log_format: LogFormat, stream: TextIO | None = None
) -> Literal["json", "console"]:
    """The format to write: ``auto`` becomes console on a terminal, JSON elsewhere.

    Args:
        log_format: The configured format.
        stream: The stream logs go to (default: standard error).

    Returns:
        ``json`` or ``console``.
    """
    if log_format != "auto":
        return log_format
    target = stream or sys.stderr
    is_terminal = getattr(target, "isatty", None)
    return "console" if callable(is_terminal) and is_terminal() else "json"


def formatter_for(log_format: Literal["json", "console"]) -> logging.Formatter:
    """The formatter of one format."""
    return ConsoleFormatter() if log_format == "console" else JsonFormatter()


def configure_logging(level: str, log_format: LogFormat = "auto") -> None:
    """One stderr handler on the root logger, in one format, for our loggers and uvicorn's.

    Idempotent: calling it again replaces the format and the level, never adds a second handler.
    uvicorn's own handlers are removed so its lines come through the same handler.

    Args:
        level: The level of the ``app`` loggers (``INFO``, ``DEBUG``, …).
        log_format: ``json``, ``console`` or ``auto``.
    """
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, StderrHandler)), None)
    if handler is None:
        handler = StderrHandler()
        root.addHandler(handler)
    handler.setFormatter(formatter_for(resolve_format(log_format)))
    app_logger = logging.getLogger("app")
    app_logger.setLevel(level.upper())
    app_logger.propagate = True
    for name in UVICORN_LOGGERS:
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True
