"""JVM stack traces: the root cause is the last top-level ``Caused by:``.

The JVM prints the root cause last; its deepest application frame is the first ``at`` frame
outside ``java.``, ``sun.``, ``jdk.`` and common framework packages. When the root cause has
only such frames, the enclosing exceptions' first application frame is used. Suppressed
exceptions are not the cause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.evidence.model import EvidenceFormat, ExceptionBlock, Frame, Trace

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


def parse_java_stack_trace(text: str) -> Trace | None:
    """The root cause of a JVM stack trace: the last top-level ``Caused by:``.

    Args:
        text: Stack trace text (``Exception in thread…``, ``at …`` frames, ``Caused by:``).

    Returns:
        The parsed trace, or None when ``text`` holds no JVM exception.
    """
    blocks: list[ExceptionBlock] = []
    suppressed = False
    for raw in text.splitlines():
        caused = _JAVA_CAUSED_BY_RE.match(raw)
        if caused:
            blocks.append(ExceptionBlock(exception_type=caused["type"]))
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
            blocks.append(ExceptionBlock(exception_type=header["type"]))
            if header["message"]:
                blocks[-1].message_lines.append(header["message"])
    if not blocks or not any(b.frames for b in blocks):
        return None
    root = blocks[-1]
    frame = _first_app_frame(root.frames)
    for outer in reversed(blocks[:-1]):
        frame = frame or _first_app_frame(outer.frames)
    return Trace(
        EvidenceFormat.JAVA_STACK_TRACE, root.exception_type, root.message, frame, text.strip()
    )


def is_java_trace_start(lines: Sequence[str], i: int) -> bool:
    """Whether ``lines[i]`` opens a JVM stack trace (an exception line followed by a frame).

    Args:
        lines: The lines of a log entry.
        i: The index of the candidate line.

    Returns:
        True when a JVM trace starts at ``i``.
    """
    line = lines[i]
    if not (_JAVA_HEADER_RE.match(line) or _JAVA_CAUSED_BY_RE.match(line.strip())):
        return False
    return i + 1 < len(lines) and bool(_JAVA_FRAME_RE.match(lines[i + 1]))


def java_trace_end(lines: Sequence[str], start: int) -> int:
    """Index just past the JVM stack trace starting at ``start``.

    Args:
        lines: The lines of a log entry.
        start: The index of the trace's exception line.

    Returns:
        The index of the first line after the trace.
    """
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


def _java_frame(line: str) -> Frame | None:
    match = _JAVA_FRAME_RE.match(line)
    if not match:
        return None
    location = match["location"]
    file, _, number = location.partition(":")
    return Frame(file or location, int(number) if number.isdigit() else None, match["func"])


def _first_app_frame(frames: Sequence[Frame]) -> Frame | None:
    for frame in frames:
        if not frame.function.startswith(_JAVA_LIBRARY_PREFIXES):
            return frame
    return None
