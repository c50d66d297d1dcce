"""Turn a raw log or traceback file into an incident (``rca analyze --log FILE``).

The parser picks the causal record; the incident gets its message from it, the attached trace
as ``stack_trace``, the ERROR-level lines as ``logs``, an ``error_code`` only when the causal
region names exactly one, and the first service name found.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core.errors import ValidationFailed
from app.evidence.logs import record_level
from app.evidence.model import Level
from app.evidence.parse import parse_text
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS, find_error_codes
from app.schemas import (
    MAX_LOG_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_STACK_TRACE_CHARS,
    IncidentCreate,
)

MAX_LOG_ENTRIES = 200
MAX_SERVICE_CHARS = 128
MAX_FILE_BYTES = 20_000_000


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def incident_from_text(
    text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> dict[str, Any]:
    """An ``IncidentCreate``-shaped dict from raw log or traceback text.

    Args:
        text: The raw text.
        patterns: Error-code regular expressions.

    Returns:
        The incident fields (``message`` always; the others when found).

    Raises:
        ValidationFailed: The text holds no log lines at all.
    """
    parsed = parse_text(text, patterns)
    if not parsed.causal_line:
        raise ValidationFailed("the log holds no lines to analyse")
    if parsed.exception_type:
        message = parsed.exception_type
        if parsed.exception_message:
            message = f"{message}: {parsed.exception_message}"
        context = parsed.causal_message or ""
        if context and parsed.exception_type not in context and parsed.trace:
            message = f"{context} ({message})"
    else:
        message = parsed.causal_message or parsed.causal_line
    incident: dict[str, Any] = {"message": _cap(message.strip(), MAX_MESSAGE_CHARS)}
    if parsed.trace:
        incident["stack_trace"] = _cap(parsed.trace, MAX_STACK_TRACE_CHARS)
    error_lines = [
        _cap(line.rstrip(), MAX_LOG_LINE_CHARS)
        for line in text.splitlines()
        if line.strip() and record_level(line) is Level.ERROR
    ]
    if error_lines:
        incident["logs"] = error_lines[:MAX_LOG_ENTRIES]
    codes = find_error_codes(f"{parsed.causal_line}\n{parsed.trace or ''}", patterns)
    if len(codes) == 1:
        incident["error_code"] = codes[0]
    service = next((s for s in parsed.services if len(s) <= MAX_SERVICE_CHARS), None)
    if service:
        incident["service"] = service
    IncidentCreate.model_validate(incident)  # the shape the API accepts, or fail here
    return incident


def incident_from_log(
    path: Path, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> dict[str, Any]:
    """An ``IncidentCreate``-shaped dict from a raw log or traceback file.

    Args:
        path: The file (read as UTF-8, undecodable bytes replaced).
        patterns: Error-code regular expressions.

    Returns:
        The incident fields.

    Raises:
        ValidationFailed: The file is too large or holds no log lines.
        OSError: The file cannot be read.
    """
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValidationFailed(f"the log file is larger than {MAX_FILE_BYTES} bytes")
    return incident_from_text(path.read_text(encoding="utf-8", errors="replace"), patterns)
