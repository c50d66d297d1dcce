"""Spelling repair for queries, against the words of the knowledge base.

On-call reports are typed in a hurry ("invetnory servce unavalable 503"). A misspelt word
falls apart into unrelated word pieces for the embedder and matches nothing in BM25, so such a
report can fall below the retrieval floor. ``repair_spelling`` returns the query with those words
replaced by the closest word of the knowledge base; the engine searches with it in place of the
original (like a search engine's "showing results for") and lists the repairs in its notes.

A word is repaired only when all of these hold, to leave real words and identifiers alone:

- it is a plain word of 4+ letters between spaces or punctuation, not part of an identifier
  (``SaleLine``, ``cardgw.internal``, ``temperature_c``, ``CERT``);
- it is not a word of the knowledge base, nor a whole word of the embedding model's vocabulary
  (30,000 common English words and names: "cart", "shoppers", "crawling" stay);
- a knowledge-base word starts with the same letter and lies within 1 edit (words of up to 6
  letters) or 2 edits (longer words), counting a swap of neighbours as one edit. The first-letter
  rule keeps "unhealthy" from becoming "healthy".

The closest word wins, then the more frequent one in the knowledge base, then the first in
alphabetical order. The words are held in a ``Lexicon`` that files them by first letter and
length, so a repair reads only the words it could become, not the whole vocabulary: the cost of
a query stays flat as the knowledge base grows.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MIN_LENGTH = 4
#: Words up to this many letters get one edit; longer words two.
SHORT_WORD = 6

_WORD_RE = re.compile(r"[a-z]+")
#: A candidate word: letters only, optionally capitalised, not glued to an identifier on either
#: side (a letter, digit or ``_``; or ``. - / : @`` joining it to one). A sentence's final period
#: or a colon before a space is punctuation, not part of an identifier.
_CANDIDATE_RE = re.compile(r"(?<![\w.\-/:@])([A-Za-z][a-z]+)(?!\w|[.\-/:@]\w)")


@dataclass(frozen=True)
class SpellingRepair:
    """The repaired query and each ``(typed, repaired)`` word, in order of appearance."""

    text: str
    changes: list[tuple[str, str]]


def word_counts(texts: Iterable[str]) -> Counter[str]:
    """Lower-case alphabetic words of ``texts`` with their number of occurrences."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_WORD_RE.findall(text.lower()))
    return counts


class Lexicon(Mapping[str, int]):
    """Known words with their counts, filed by (first letter, length) for repair lookups."""

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self._counts: dict[str, int] = dict(counts or {})
        self._shelves: dict[tuple[str, int], list[tuple[str, int]]] = {}
        for word, count in self._counts.items():
            if word:
                self._shelves.setdefault((word[0], len(word)), []).append((word, count))

    def __getitem__(self, word: str) -> int:
        return self._counts[word]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def near(self, word: str, limit: int) -> Iterator[tuple[str, int]]:
        """Words with ``word``'s first letter whose length is within ``limit`` of its length."""
        for length in range(len(word) - limit, len(word) + limit + 1):
            yield from self._shelves.get((word[0], length), ())


@lru_cache(maxsize=4)
def model_words(tokenizer_path: Path) -> frozenset[str]:
    """The whole words (not ``##`` continuations) of a WordPiece ``tokenizer.json``."""
    vocab = json.loads(tokenizer_path.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(word for word in vocab if word.isalpha())


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` once above it.

    Insertions, deletions, substitutions and swaps of two neighbouring letters cost one each.
    """
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            current[j] = min(
                previous[j] + 1,
                current[j - 1] + 1,
                previous[j - 1] + (a[i - 1] != b[j - 1]),
            )
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


def closest_word(word: str, known: Lexicon) -> str | None:
    """The knowledge-base word ``word`` was most likely meant to be, if one is close enough."""
    limit = 1 if len(word) <= SHORT_WORD else 2
    best: tuple[int, int, str] | None = None
    for candidate, count in known.near(word, limit):
        distance = edit_distance(word, candidate, limit)
        if distance <= limit:
            key = (distance, -count, candidate)
            best = key if best is None or key < best else best
    return best[2] if best else None


def repair_spelling(
    query: str, known: Lexicon, common: frozenset[str] = frozenset()
) -> SpellingRepair | None:
    """``query`` with misspelt words replaced by knowledge-base words, or ``None`` if none was.

    Args:
        query: The user's query.
        known: Knowledge-base words with their counts (``Lexicon(word_counts(...))``).
        common: Correctly spelt words that are never repaired (``model_words``).

    Returns:
        The repaired text and the changes, or ``None`` when nothing was repaired.
    """
    changes: list[tuple[str, str]] = []

    def replace(match: re.Match[str]) -> str:
        typed = match.group(1)
        word = typed.lower()
        if len(word) < MIN_LENGTH or word in known or word in common:
            return typed
        repaired = closest_word(word, known)
        if repaired is None:
            return typed
        changes.append((typed, repaired))
        return repaired

    text = _CANDIDATE_RE.sub(replace, query)
    return SpellingRepair(text, changes) if changes else None
