"""The log-file source: error and warning records around the incident, read like pasted logs.

For the incident's service the sources file names globs (``app.evidence.sources.config``). Each
matching file is read from its end (at most ``MAX_TAIL_BYTES``; line numbers still count from
the top) and cut into records: a line that starts a record (timestamp, level or JSON object
first) plus the lines under it, such as a stack trace. A record's time is its leading timestamp
(ISO 8601, syslog, a JSON ``time`` field, the common log format's bracketed time; naive times
are UTC) or, without
one, the time of the record above. Records inside the window whose level is error or warning are
kept, read by the same record parser as pasted logs (``app.evidence.logs``), and repeats of one
message are folded into their first occurrence with a count. Each becomes an item
``log:<file>:<line>``.
"""

from __future__ import annotations

import asyncio
import glob
import json
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from app.evidence.logs import RecordFacts, read_record, split_records
from app.evidence.model import Level
from app.evidence.patterns import (
    DEFAULT_ERROR_CODE_PATTERNS,
    LEADING_TIMESTAMP_RE,
    is_record_start,
    normalise,
)
from app.evidence.sources.base import (
    CollectedItem,
    CollectionRequest,
    SourceReport,
    iso,
    parse_time,
)
from app.evidence.sources.config import SourcesConfig

MAX_TAIL_BYTES = 8_000_000
MAX_FILES = 20
#: Items kept per collection, errors before warnings, earliest first.
MAX_ITEMS = 30
MAX_RECORD_LINES = 60
MAX_LINE_CHARS = 1_000
MAX_SUMMARY_MESSAGE_CHARS = 300
_KEPT_LEVELS = {Level.ERROR: 0, Level.WARN: 1}
_SEVERITY = {Level.ERROR: 0, Level.WARN: 1, Level.INFO: 2, Level.NONE: 3}
_JSON_TIME_KEYS = ("time", "timestamp", "ts", "@timestamp", "asctime", "datetime")
_OFFSET_RE = re.compile(r"([+-]\d{2})(\d{2})$")
#: The common log format's time, in brackets after the client: ``[29/Nov/2026:09:57:00 +0000]``.
_CLF_TIME_RE = re.compile(r"\[(\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?)\]")
_CHUNK = 1 << 20


@dataclass
class _Record:
    """Lines of one record while a file is read."""

    lines: list[tuple[int, str]]
    time: datetime | None

    @property
    def first_line(self) -> int:
        """The number of the record's first line in its file."""
        return self.lines[0][0]


@dataclass
class _Folded:
    """A kept record and how often its message repeated in the window."""

    record: _Record
    facts: RecordFacts
    count: int = 1
    last_time: datetime | None = None
    label: str = ""
    path: str = ""
    pattern: str = ""


def line_time(line: str, reference: datetime) -> datetime | None:
    """The time a log line starts with (or its JSON time field), as aware UTC.

    Args:
        line: One log line.
        reference: Supplies the date of a time-only stamp and the year of a syslog stamp.

    Returns:
        The time, or None when the line carries none.
    """
    stripped = line.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in _JSON_TIME_KEYS:
                value = data.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    seconds = value / 1000 if value > 1e11 else value
                    return datetime.fromtimestamp(seconds, UTC)
                if (moment := _parse_stamp(str(value or ""), reference)) is not None:
                    return moment
            return None
    match = LEADING_TIMESTAMP_RE.match(line)
    if match:
        return _parse_stamp(match.group(0), reference)
    clf = _CLF_TIME_RE.search(line[:120])
    return _parse_stamp(clf.group(1), reference) if clf else None


def _parse_stamp(text: str, reference: datetime) -> datetime | None:
    text = text.strip().strip("[]").strip()
    if not text:
        return None
    iso_text = _OFFSET_RE.sub(r"\1:\2", text.replace(",", "."))
    if re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d", iso_text):
        moment = parse_time(iso_text)
        if moment is not None:
            return moment
    formats = (
        ("%d/%b/%Y:%H:%M:%S %z", False),
        ("%d/%b/%Y:%H:%M:%S", False),
        ("%b %d %H:%M:%S", True),
    )
    for fmt, needs_year in formats:
        try:
            parsed = datetime.strptime(" ".join(text.split()), fmt)
        except ValueError:
            continue
        if needs_year:
            parsed = parsed.replace(year=reference.year)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    clock = re.match(r"^(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?$", text)
    if clock:
        hour, minute, second = (int(clock.group(i)) for i in (1, 2, 3))
        day = reference.astimezone(UTC)
        return day.replace(hour=hour, minute=minute, second=second, microsecond=0)
    return None


def read_tail(path: Path, max_bytes: int = MAX_TAIL_BYTES) -> tuple[int, list[str]]:
    """The last whole lines of a file within ``max_bytes``, and the number of the first one.

    Args:
        path: The file.
        max_bytes: How much of its end to read.

    Returns:
        ``(number of the first returned line, lines)``; line numbers start at 1.
    """
    size = path.stat().st_size
    offset = max(0, size - max_bytes)
    with path.open("rb") as handle:
        skipped = 0
        remaining = offset
        while remaining > 0:
            chunk = handle.read(min(_CHUNK, remaining))
            if not chunk:
                break
            skipped += chunk.count(b"\n")
            remaining -= len(chunk)
        data = handle.read()
    lines = data.decode("utf-8", errors="replace").splitlines()
    first = skipped + 1
    if offset > 0 and lines:
        lines, first = lines[1:], first + 1  # the first line was cut by the offset
    return first, lines


def records_of(first: int, lines: list[str], reference: datetime) -> list[_Record]:
    """Lines grouped into records, each with its time (inherited when it has none)."""
    records: list[_Record] = []
    current_time: datetime | None = None
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        stamp = line_time(line, reference)
        if stamp is not None or is_record_start(line) or not records:
            current_time = stamp or current_time
            records.append(_Record([(first + index, line)], current_time))
        elif len(records[-1].lines) < MAX_RECORD_LINES:
            records[-1].lines.append((first + index, line))
    return records


def _facts(record: _Record, patterns: tuple[str, ...]) -> RecordFacts:
    """What a record says; a trace under its line decides the exception."""
    parsed = split_records(["\n".join(text for _, text in record.lines)])
    facts = [read_record(r, patterns) for r in parsed]
    main = next((f for f in facts if f.trace is not None), facts[0])
    level = min((f.level for f in facts), key=lambda lv: _SEVERITY[lv])
    return main if level is main.level else replace(main, level=level)


def _label(path: str, pattern: str) -> str:
    """The file's name as item ids write it: relative to the glob's fixed folder."""
    fixed = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    base = fixed if fixed.endswith("/") else str(Path(fixed).parent)
    try:
        relative = str(Path(path).relative_to(base))
    except ValueError:
        relative = Path(path).name
    return re.sub(r"\s+", "_", relative)


class LogFileSource:
    """Evidence from log files named per service in the sources file.

    Args:
        config: The sources file.
        patterns: Error-code regular expressions (``RCA_ERROR_CODE_PATTERNS``).
        max_items: The most items one collection returns.
    """

    name = "logs"

    def __init__(
        self,
        config: SourcesConfig,
        patterns: tuple[str, ...] = DEFAULT_ERROR_CODE_PATTERNS,
        max_items: int = MAX_ITEMS,
    ) -> None:
        self.config = config
        self.patterns = tuple(patterns)
        self.max_items = max_items

    async def collect(self, request: CollectionRequest) -> SourceReport:
        """Error and warning records of the service's log files inside the window."""
        return await asyncio.to_thread(self.collect_now, request)

    def collect_now(self, request: CollectionRequest) -> SourceReport:
        """The synchronous core of ``collect`` (file reads block)."""
        problems: list[str] = []
        files: dict[str, str] = {}
        for pattern in self.config.log_globs_for(request.service):
            matched = sorted(p for p in glob.glob(pattern) if Path(p).is_file())
            if not matched:
                problems.append(f"no log file matches {pattern}")
            for path in matched:
                files.setdefault(path, pattern)
        folded: dict[tuple[str, int, str], _Folded] = {}
        for path, pattern in list(files.items())[:MAX_FILES]:
            try:
                first, lines = read_tail(Path(path))
            except OSError as exc:
                problems.append(f"cannot read {Path(path).name}: {type(exc).__name__}")
                continue
            label = _label(path, pattern)
            for record in records_of(first, lines, request.at):
                if record.time is None or not request.start <= record.time <= request.end:
                    continue
                facts = _facts(record, self.patterns)
                if facts.level not in _KEPT_LEVELS:
                    continue
                key = (path, _KEPT_LEVELS[facts.level], normalise(facts.message or facts.line))
                if key in folded:
                    folded[key].count += 1
                    folded[key].last_time = record.time
                else:
                    folded[key] = _Folded(record, facts, label=label, path=path, pattern=pattern)
        kept = sorted(
            folded.values(),
            key=lambda f: (_KEPT_LEVELS[f.facts.level], f.record.time or request.at),
        )[: self.max_items]
        kept.sort(key=lambda f: (f.record.time or request.at, f.path, f.record.first_line))
        return SourceReport(items=[self._item(f, request) for f in kept], problems=problems)

    def _item(self, folded: _Folded, request: CollectionRequest) -> CollectedItem:
        record, facts = folded.record, folded.facts
        message = (facts.message or facts.line).strip()
        if facts.exception_type and facts.exception_type not in message:
            exception = facts.exception_type
            if facts.exception_message:
                exception = f"{exception}: {facts.exception_message}"
            message = f"{message} — {exception}"
        if len(message) > MAX_SUMMARY_MESSAGE_CHARS:
            message = message[: MAX_SUMMARY_MESSAGE_CHARS - 1] + "…"
        level = facts.level.value.upper()
        summary = f"{folded.label}:{record.first_line} {level} {message}"
        if folded.count > 1 and folded.last_time is not None:
            summary += f" (×{folded.count} in the window, last at {iso(folded.last_time)})"
        lines = [{"number": n, "text": text[:MAX_LINE_CHARS]} for n, text in record.lines]
        return CollectedItem(
            id=f"log:{folded.label}:{record.first_line}",
            source=self.name,
            kind="log",
            summary=summary,
            query=folded.pattern,
            range={"start": iso(request.start), "end": iso(request.end), "at": iso(request.at)},
            lines=lines,
            facts={
                "level": facts.level.value,
                "time": iso(record.time) if record.time else None,
                "exception_type": facts.exception_type,
                "exception_message": facts.exception_message,
                "error_codes": list(facts.codes),
                "http_statuses": list(facts.statuses),
                "services": list(facts.services),
                "frame": str(facts.frame) if facts.frame else None,
                "count": folded.count,
            },
            file=folded.path,
            line=record.first_line,
        )
