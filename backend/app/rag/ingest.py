"""Knowledge-base ingestion: parse ``error_docs.txt`` into chunks with stable ids and metadata.

The text file is the source of truth; the vector collection is derived state. Entries are split
on a line ``---``, stripped, empty ones dropped and exact duplicates removed (first kept). A chunk's
id is ``error-doc-`` + the first 16 hex characters of the sha256 of its text, so ids are stable
across restarts and change exactly when the text changes.

An entry may name the service it belongs to: ``Service: pos-api (aliases: pos, till-api)``
becomes the metadata ``service`` (the canonical name) and ``services`` (a JSON list, canonical
first). Every entry also carries its expected signals (``app.rag.signals``) as JSON under
``signals``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.errors import KnowledgeBaseError
from app.rag.signals import METADATA_KEY as SIGNALS_KEY
from app.rag.signals import derive_signals, parse_service_line, signals_json

logger = logging.getLogger(__name__)

CHUNK_DELIMITER = "\n---\n"
ID_PREFIX = "error-doc-"
FIELDS = (
    "Error",
    "Component",
    "Service",
    "Symptoms",
    "Cause",
    "Evidence",
    "Solution",
    "Validation",
)
#: ``CO-500``, ``PAY-408``, ``POS-503-PLU``: letters, then dash-separated parts.
ERROR_CODE_RE = re.compile(r"^[A-Z]{2,6}(?:-[A-Z0-9]{2,12})+$")
ERROR_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_FIELD_LINE_RE = re.compile(r"^(" + "|".join(FIELDS) + r"):\s*(.*)$")


@dataclass(frozen=True)
class KnowledgeChunk:
    """One knowledge-base entry ready for the store."""

    id: str
    text: str
    metadata: dict[str, str | int]


@dataclass
class ParsedKnowledge:
    """The outcome of parsing a source: chunks plus non-fatal warnings."""

    chunks: list[KnowledgeChunk] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def chunk_id(text: str, prefix: str = ID_PREFIX) -> str:
    """Content-derived id: stable across restarts, changes when the text changes."""
    return prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def knowledge_version(ids: list[str]) -> str:
    """A short hash over the set of ingested ids, recorded in every RCA's provenance."""
    joined = "\n".join(sorted(ids)).encode("utf-8")
    return "kb-" + hashlib.sha256(joined).hexdigest()[:12]


def split_entries(text: str) -> list[tuple[int, str]]:
    """Split on the delimiter; return ``(first line number, stripped entry)`` for non-empty ones."""
    # Newlines around the text let a delimiter on the first or last line count too.
    normalised = "\n" + text.replace("\r\n", "\n") + "\n"
    entries: list[tuple[int, str]] = []
    line = 0
    for raw in normalised.split(CHUNK_DELIMITER):
        stripped = raw.strip()
        if stripped:
            leading = raw[: len(raw) - len(raw.lstrip())]
            entries.append((line + leading.count("\n"), stripped))
        line += raw.count("\n") + CHUNK_DELIMITER.count("\n")
    return entries


def parse_fields(entry: str) -> dict[str, str]:
    """Read ``Field: value`` lines; a line without a known field continues the previous one."""
    fields: dict[str, str] = {}
    current: str | None = None
    for line in entry.splitlines():
        match = _FIELD_LINE_RE.match(line.strip())
        if match:
            current = match.group(1)
            fields[current] = match.group(2).strip()
        elif current is not None and line.strip():
            fields[current] = (fields[current] + " " + line.strip()).strip()
    return fields


def parse_error_docs(
    text: str,
    source: str = "error_docs.txt",
    count_tokens: Callable[[str], int] | None = None,
    max_tokens: int = 256,
) -> ParsedKnowledge:
    """Parse the error-docs format; raise ``KnowledgeBaseError`` naming the bad entry and line."""
    parsed = ParsedKnowledge()
    seen: set[str] = set()
    for number, (line, entry) in enumerate(split_entries(text), start=1):
        if entry in seen:
            continue
        seen.add(entry)
        fields = parse_fields(entry)
        where = f"{source}: entry {number} (line {line})"
        if "Error" not in fields:
            raise KnowledgeBaseError(f"{where}: missing 'Error:' line")
        code, _, name = fields["Error"].partition(" ")
        name = name.strip()
        if not ERROR_CODE_RE.match(code) or not ERROR_NAME_RE.match(name):
            raise KnowledgeBaseError(
                f"{where}: cannot parse 'Error: {fields['Error']}' "
                "(expected 'Error: <CODE> <NAME>', e.g. 'Error: PAY-408 PAYMENT_TIMEOUT')"
            )
        if count_tokens is not None:
            tokens = count_tokens(entry)
            if tokens > max_tokens:
                parsed.warnings.append(
                    f"{where} ({code}) has {tokens} tokens, over the model's {max_tokens}-token "
                    "window: the embedding sees only its first part; shorten or split it"
                )
        metadata: dict[str, str | int] = {
            "error_code": code,
            "error_name": name,
            "source": source,
            "entry": number,
        }
        for key in FIELDS[1:]:
            if key in fields:
                metadata[key.lower()] = fields[key]
        services = parse_service_line(fields.get("Service", ""))
        if services:
            metadata["service"] = services[0]
            metadata["services"] = json.dumps(services)
        metadata[SIGNALS_KEY] = signals_json(derive_signals({**fields, "Code": code}, services))
        parsed.chunks.append(KnowledgeChunk(id=chunk_id(entry), text=entry, metadata=metadata))
    return parsed


def load_error_docs(
    path: Path, count_tokens: Callable[[str], int] | None = None
) -> ParsedKnowledge:
    """Read and parse one error-docs file; refuse a missing file or one without entries."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KnowledgeBaseError(f"cannot read knowledge base {path}: {exc.strerror}") from exc
    parsed = parse_error_docs(text, source=path.name, count_tokens=count_tokens)
    if not parsed.chunks:
        raise KnowledgeBaseError(
            f"knowledge base {path} has no entries: refusing to start with an empty knowledge base"
        )
    for warning in parsed.warnings:
        logger.warning(warning)
    return parsed
