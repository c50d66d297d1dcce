"""Python tracebacks: the root cause of a (possibly chained) traceback.

Python prints the root cause of a chain first ("During handling of the above exception…",
"The above exception was the direct cause…"), so the first exception wins; its deepest
application frame is the last frame outside site-packages and the standard library. When the
root cause has only library frames, the first application frame of a later exception is used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.evidence.model import EvidenceFormat, ExceptionBlock, Frame, Trace
from app.evidence.patterns import EXCEPTION_TYPE_RE, is_record_start

MAX_MESSAGE_CONTINUATION_LINES = 3

PY_TRACE_START = "Traceback (most recent call last):"
_PY_CHAIN_SEPARATORS = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_PY_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
_PY_EXCEPTION_LINE_RE = re.compile(
    r"^(?P<type>[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(?::\s?(?P<message>.*))?$"
)
_PY_LIBRARY_MARKERS = ("site-packages", "dist-packages", "<frozen ", "/lib/python", "\\lib\\")


def parse_python_traceback(text: str) -> Trace | None:
    """The root cause of a (possibly chained) Python traceback.

    Args:
        text: Traceback text; a bare ``Type: message`` line without frames also counts.

    Returns:
        The parsed trace, or None when ``text`` holds no exception.
    """
    blocks: list[ExceptionBlock] = []
    current: ExceptionBlock | None = None
    in_message = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if PY_TRACE_START in raw:
            current, in_message = ExceptionBlock(), False
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
            current = ExceptionBlock()
            blocks.append(current)
        current.exception_type = exception["type"]
        if exception["message"]:
            current.message_lines.append(exception["message"].strip())
        in_message = True
    blocks = [b for b in blocks if b.exception_type]
    if not blocks:
        return None
    root = blocks[0]  # Python prints the original exception of a chain first.
    frame = _last_app_frame(root.frames)
    for later in blocks[1:]:
        frame = frame or _last_app_frame(later.frames)
    return Trace(
        EvidenceFormat.PYTHON_TRACEBACK, root.exception_type, root.message, frame, text.strip()
    )


def source_echo_lines(lines: Sequence[str]) -> set[int]:
    """Indexes of the program-source lines a Python traceback echoes under its frames.

    ``    per_item = total / item_count`` under ``File "checkout.py", line 41`` is the code that
    ran, not what happened: its words are variable names. A line counts when it directly
    follows a frame line and is neither a frame nor an exception line (so a trace pasted
    without its indentation is read the same way).
    """
    echoed: set[int] = set()
    for i in range(1, len(lines)):
        line = lines[i]
        if not _PY_FRAME_RE.match(lines[i - 1]) or not line.strip() or _PY_FRAME_RE.match(line):
            continue
        exception = _PY_EXCEPTION_LINE_RE.match(line.strip())
        if exception is None or not _looks_like_exception(exception["type"]):
            echoed.add(i)
    return echoed


def python_trace_end(lines: Sequence[str], start: int) -> int:
    """Index just past the Python traceback (with its chain) starting at ``start``.

    Args:
        lines: The lines of a log entry.
        start: The index of the ``Traceback (most recent call last):`` line.

    Returns:
        The index of the first line after the traceback.
    """
    i, in_message, message_lines = start + 1, False, 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and (
                lines[j].strip() in _PY_CHAIN_SEPARATORS or PY_TRACE_START in lines[j]
            ):
                i, in_message = j, False
                continue
            break
        if stripped in _PY_CHAIN_SEPARATORS or PY_TRACE_START in raw:
            i, in_message = i + 1, False
            continue
        if raw[:1].isspace():
            i += 1
            continue
        if not in_message:
            in_message, message_lines = True, 0
            i += 1
            continue
        if is_record_start(raw) or message_lines >= MAX_MESSAGE_CONTINUATION_LINES:
            break
        message_lines += 1
        i += 1
    return i


def _looks_like_exception(name: str) -> bool:
    return bool(EXCEPTION_TYPE_RE.fullmatch(name)) or name.rsplit(".", 1)[-1] in {
        "KeyboardInterrupt",
        "StopIteration",
        "SystemExit",
        "Warning",
    }


def _is_library(path: str) -> bool:
    return any(marker in path for marker in _PY_LIBRARY_MARKERS) or path.startswith("<")


def _last_app_frame(frames: Sequence[Frame]) -> Frame | None:
    candidates = [f for f in frames if not _is_library(f.file)]
    return candidates[-1] if candidates else None
