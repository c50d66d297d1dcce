"""Budgeted context: how much retrieved text a query deserves, packed greedily.

The complexity class comes from the *original* query (a rewrite must not change the budget):
simple (at most 10 words, no compare/multi markers, at most one ``?``), medium (at most 28 words),
complex (anything longer). Each class maps to a token budget; ``budget * 4`` characters is the
packing limit (about four characters per token for English). Packing walks the ranked chunks,
skips empty texts, always keeps the first non-empty one (even when it alone is over budget) and
stops at the first chunk that would overflow, so the kept chunks are a prefix of the ranking.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.rag.retrieve import RankedDoc

CHARS_PER_TOKEN = 4
SIMPLE_MAX_WORDS = 10
MEDIUM_MAX_WORDS = 28

#: Words that ask for several things at once, which a short budget would starve.
_MULTI_MARKERS_RE = re.compile(
    r"\b(compare[sd]?|comparing|comparison|versus|vs\.?|differences?|differ|between|"
    r"both|multiple|several|whereas|as well as)\b",
    re.IGNORECASE,
)


class Complexity(StrEnum):
    """How much context a query deserves."""

    SIMPLE = "simple"
    MEDIUM = "medium"
    COMPLEX = "complex"


@dataclass(frozen=True)
class Budgets:
    """Token budgets per complexity class."""

    simple: int = 512
    medium: int = 1024
    complex: int = 2048

    def tokens(self, complexity: Complexity) -> int:
        """The token budget of ``complexity``."""
        return {
            Complexity.SIMPLE: self.simple,
            Complexity.MEDIUM: self.medium,
            Complexity.COMPLEX: self.complex,
        }[complexity]


@dataclass(frozen=True)
class PackedContext:
    """The chunks that fit the budget and what they cite."""

    chunks: list[RankedDoc]
    citations: list[str]
    complexity: Complexity
    budget_chars: int
    used_chars: int


def classify_complexity(query: str) -> Complexity:
    """The complexity class of ``query`` (a static heuristic, no model).

    Args:
        query: The original user query.

    Returns:
        ``simple``, ``medium`` or ``complex``.
    """
    words = len(query.split())
    has_markers = bool(_MULTI_MARKERS_RE.search(query))
    if words <= SIMPLE_MAX_WORDS and not has_markers and query.count("?") <= 1:
        return Complexity.SIMPLE
    if words <= MEDIUM_MAX_WORDS:
        return Complexity.MEDIUM
    return Complexity.COMPLEX


def default_source_id(doc: RankedDoc) -> str | None:
    """What a chunk cites: its ``source_id`` metadata, else its ``error_code``, else its file.

    Knowledge-base chunks carry ``error_code`` (``PAY-408``), so their citations are error codes,
    the unit an RCA cites; other collections may set ``source_id`` explicitly.
    """
    for key in ("source_id", "error_code", "source"):
        value = doc.metadata.get(key)
        if value is not None and str(value).strip():
            return str(value)
    return None


def pack_context(
    docs: Sequence[RankedDoc],
    budget_tokens: int,
    complexity: Complexity = Complexity.SIMPLE,
    source_id: Callable[[RankedDoc], str | None] = default_source_id,
) -> PackedContext:
    """Greedily pack ranked chunks under ``budget_tokens * 4`` characters.

    Args:
        docs: Chunks in final rank order.
        budget_tokens: The token budget.
        complexity: The class the budget came from (recorded in the result).
        source_id: Maps a chunk to what it cites (``None``: cites nothing).

    Returns:
        The kept chunks (a prefix of the non-empty ones) and the sorted set of their citations.
    """
    budget_chars = max(0, budget_tokens) * CHARS_PER_TOKEN
    kept: list[RankedDoc] = []
    used = 0
    for doc in docs:
        size = len(doc.text)
        if not doc.text.strip():
            continue
        if kept and used + size > budget_chars:
            break
        kept.append(doc)
        used += size
    citations = sorted({s for s in (source_id(d) for d in kept) if s is not None})
    return PackedContext(
        chunks=kept,
        citations=citations,
        complexity=complexity,
        budget_chars=budget_chars,
        used_chars=used,
    )
