"""Markdown runbooks as knowledge chunks: one chunk per heading section, split to fit the model.

A runbook is split at its ATX headings (``#`` to ``######``; headings inside fenced code blocks
do not count). Each section becomes one chunk whose text starts with the heading path
(``Payments runbook > Provider timeouts``) so every chunk carries its context. A section longer
than the embedding window is split further at paragraph boundaries (a fenced code block counts
as one paragraph), then at lines, sentences and finally words -- text is never cut off. Only a
single word longer than the window is left over-long, and that is reported as a warning.

Ids are ``runbook-`` + the first 16 hex characters of the sha256 of the chunk text, exactly like
error docs. A chunk gets an ``error_code`` only when its section (heading path and body) names
exactly one code, so the engine's error-code boost applies to runbooks written for one family.

A runbook may open with front matter between ``---`` lines: ``service: payment-service`` or
``services: [payment-service, payments]`` names the services it applies to (metadata
``service`` and ``services``, as for an error doc's ``Service:`` line), and ``exceptions:``,
``statuses:``, ``paths:``, ``files:``, ``identifiers:``, ``phrases:`` declare expected signals
beyond those derived from each section's text (``app.rag.signals``, metadata ``signals``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from app.rag.ingest import KnowledgeChunk, ParsedKnowledge, chunk_id
from app.rag.signals import KINDS as SIGNAL_KINDS
from app.rag.signals import METADATA_KEY as SIGNALS_KEY
from app.rag.signals import derive_signals, parse_service_line, signals_json, split_list

ID_PREFIX = "runbook-"
KIND = "runbook"
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: Error codes as the error docs write them (``PAY-408``, ``POS-422-QTY``); a digit is required
#: so ordinary hyphenated words in capitals do not count.
_CODE_RE = re.compile(r"(?<![A-Za-z0-9-])[A-Z]{2,6}(?:-[A-Z0-9]{2,12})+(?![A-Za-z0-9-])")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(?P<body>.*?\n)---[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_KEY_RE = re.compile(r"^(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.*)$")


@dataclass
class FrontMatter:
    """What a runbook's front matter declares: its services and extra expected signals."""

    services: list[str] = field(default_factory=list)
    signals: dict[str, list[str]] = field(default_factory=dict)


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """The front matter and the text after it (blank lines in its place keep line numbers).

    Args:
        text: The Markdown source.

    Returns:
        The declarations (empty when there is no front matter) and the remaining text.
    """
    normalised = text.replace("\r\n", "\n")
    match = _FRONT_MATTER_RE.match(normalised)
    if match is None:
        return FrontMatter(), normalised
    front = FrontMatter()
    for line in match.group("body").splitlines():
        pair = _FRONT_KEY_RE.match(line.strip())
        if pair is None:
            continue
        key, value = pair.group("key").lower(), pair.group("value")
        if key in ("service", "services"):
            for item in split_list(value):
                front.services.extend(parse_service_line(item))
        elif key in SIGNAL_KINDS:
            front.signals[key] = split_list(value)
    blank = "\n" * match.group(0).count("\n")
    return front, blank + normalised[match.end() :]


TokenCounter = Callable[[str], int]


@dataclass
class Section:
    """One heading's text: its heading path, first line and body lines."""

    path: list[str]
    line: int
    body: list[str] = field(default_factory=list)

    @property
    def heading(self) -> str:
        """The section's own heading (empty for text before the first heading)."""
        return self.path[-1] if self.path else ""


def split_sections(text: str, title: str) -> list[Section]:
    """Split Markdown into heading sections; text before the first heading is titled ``title``.

    Args:
        text: The Markdown source.
        title: The heading used for a preamble (usually the file name without suffix).

    Returns:
        Every section in order, including ones with an empty body.
    """
    stack: list[tuple[int, str]] = []
    sections = [Section(path=[title], line=1)]
    fence: str | None = None
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        fence, fence_line = _track_fence(line, fence)
        heading = _HEADING_RE.match(line) if fence is None and not fence_line else None
        if heading is None:
            sections[-1].body.append(line)
            continue
        level, name = len(heading.group(1)), heading.group(2).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, name))
        sections.append(Section(path=[n for _, n in stack], line=number))
    return sections


def _track_fence(line: str, fence: str | None) -> tuple[str | None, bool]:
    """The open code fence after ``line`` (None outside one), and whether ``line`` is a fence."""
    match = _FENCE_RE.match(line)
    if match is None:
        return fence, False
    marker = match.group(1)
    if fence is None:
        return marker[0] * 3, True
    return (None if marker.startswith(fence) else fence), True


def paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated blocks; a fenced code block stays one block."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in lines:
        fence, fence_line = _track_fence(line, fence)
        if fence is None and not fence_line and not line.strip():
            if current:
                blocks.append("\n".join(current).strip("\n"))
                current = []
            continue
        current.append(line.rstrip())
    if current:
        blocks.append("\n".join(current).strip("\n"))
    return [b for b in blocks if b.strip()]


def _split_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _split_sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_RE.split(text) if s.strip()]


def _split_words(text: str) -> list[str]:
    return text.split()


#: Finer and finer ways to cut a unit that does not fit, with the text that rejoins the pieces.
_SPLITTERS: tuple[tuple[Callable[[str], list[str]], str], ...] = (
    (_split_lines, "\n"),
    (_split_sentences, " "),
    (_split_words, " "),
)


def pack(units: list[str], joiner: str, fits: Callable[[str], bool], level: int = 0) -> list[str]:
    """Greedily join ``units`` into pieces that fit; split a unit that alone does not fit.

    Args:
        units: Text units in order (paragraphs, lines, sentences or words).
        joiner: Rejoins adjacent units of one piece.
        fits: Whether a piece fits the window.
        level: Which of the finer splitters to use on a unit that does not fit.

    Returns:
        The pieces in order; only an unsplittable unit (one huge word) may not fit.
    """
    pieces: list[str] = []
    current = ""
    for unit in units:
        candidate = unit if not current else current + joiner + unit
        if fits(candidate):
            current = candidate
            continue
        if current:
            pieces.append(current)
            current = ""
        if fits(unit):
            current = unit
            continue
        finer = _finer(unit, fits, level)
        pieces.extend(finer[:-1])
        current = finer[-1]
        if not fits(current):
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def _finer(unit: str, fits: Callable[[str], bool], level: int) -> list[str]:
    """Split one unit that does not fit with the first splitter that actually cuts it."""
    for depth in range(level, len(_SPLITTERS)):
        split, joiner = _SPLITTERS[depth]
        parts = split(unit)
        if len(parts) > 1:
            return pack(parts, joiner, fits, depth + 1)
    return [unit]


def single_code(text: str) -> str | None:
    """The one error code ``text`` names, or ``None`` when it names none or several."""
    codes = set(_CODE_RE.findall(text))
    return codes.pop() if len(codes) == 1 else None


def parse_runbook(
    text: str,
    source: str,
    count_tokens: TokenCounter,
    max_tokens: int = 256,
) -> ParsedKnowledge:
    """Chunk a Markdown runbook by heading, each chunk within ``max_tokens`` model tokens.

    Args:
        text: The Markdown source.
        source: The name recorded as the chunks' ``source`` (relative to the sources folder).
        count_tokens: The embedding model's token counter (special tokens included).
        max_tokens: The embedding window.

    Returns:
        The chunks (duplicates within the file dropped) and warnings for over-long words.
    """
    parsed = ParsedKnowledge()
    seen: set[str] = set()
    title = source.rsplit("/", 1)[-1].removesuffix(".md")
    front, text = split_front_matter(text)
    services = list(dict.fromkeys(front.services))
    for section in split_sections(text, title):
        blocks = paragraphs(section.body)
        if not blocks:
            continue
        context = " > ".join(section.path)
        prefix = context + "\n\n"

        def fits(body: str, prefix: str = prefix) -> bool:
            return count_tokens(prefix + body) <= max_tokens

        pieces = pack(blocks, "\n\n", fits)
        code = single_code(context + "\n" + "\n".join(blocks))
        for part, piece in enumerate(pieces, start=1):
            chunk_text = prefix + piece
            tokens = count_tokens(chunk_text)
            if tokens > max_tokens:
                parsed.warnings.append(
                    f"{source}: section '{section.heading}' (line {section.line}) holds a "
                    f"{tokens}-token run without spaces, over the model's {max_tokens}-token "
                    "window: the embedding sees only its first part"
                )
            identifier = chunk_id(chunk_text, ID_PREFIX)
            if identifier in seen:
                continue
            seen.add(identifier)
            metadata: dict[str, str | int] = {
                "kind": KIND,
                "source": source,
                "heading": section.heading,
                "heading_path": context,
                "line": section.line,
                "part": part,
                "parts": len(pieces),
            }
            if code:
                metadata["error_code"] = code
            if services:
                metadata["service"] = services[0]
                metadata["services"] = json.dumps(services)
            metadata[SIGNALS_KEY] = signals_json(
                derive_signals({"Evidence": piece}, services, front.signals)
            )
            parsed.chunks.append(KnowledgeChunk(id=identifier, text=chunk_text, metadata=metadata))
    return parsed
