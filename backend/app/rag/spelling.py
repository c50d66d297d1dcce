"""Spelling repair for queries, against the words of the knowledge base.

On-call reports are typed in a hurry ("invetnory servce unavalable 503"). A misspelt word
falls apart into unrelated word pieces for the embedder and matches nothing in BM25, so such a
report can fall below the retrieval floor. ``repair_spelling`` returns the query with those words
replaced by the closest word of the knowledge base; the engine searches with it in place of the
original (like a search engine's "showing results for") and lists the repairs in its notes.

A word is repaired only when all of these hold, to leave real words and identifiers alone:

- it is a plain word of 4+ letters between spaces or punctuation, not part of an identifier
  (``SaleLine``, ``cardgw.internal``, ``temperature_c``, ``CERT``);
- it is not a known word: a word of the knowledge base or a whole word of the embedding model's
  vocabulary (30,000 common English words and names: "cart", "shoppers", "crawling" stay), nor
  another form of one -- the same English stem ("harming" as "harm", "bullied" as a knowledge-base
  "bullies"), or a common prefix in front of one ("uncultured", "remolding"). Without that rule
  real words the vocabulary lacks were "repaired" into unrelated ones ("harming" -> "having",
  "uncultured" -> "unruptured");
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
from functools import cached_property, lru_cache
from pathlib import Path

from app.evidence.distance import edit_distance
from app.rag.tokenize import stem

MIN_LENGTH = 4
#: Letters a word must keep once a prefix or suffix is removed ("discont" is not "dis" + "cont").
AFFIXED_ROOT = 5
#: Derivational suffixes a real word may carry after a known word ("executor", "gangrenous").
SUFFIXES = ("ity", "ous", "ly", "or")
#: Prefixes a real word may carry in front of a known word ("uncultured", "remolding").
PREFIXES = tuple("anti dis inter mis non over pre sub under co de re un".split())
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

    @cached_property
    def stems(self) -> frozenset[str]:
        """The English stems of the words, computed once per lexicon."""
        return frozenset(stem(word) for word in self._counts)

    def near(self, word: str, limit: int) -> Iterator[tuple[str, int]]:
        """Words with ``word``'s first letter whose length is within ``limit`` of its length."""
        for length in range(len(word) - limit, len(word) + limit + 1):
            yield from self._shelves.get((word[0], length), ())


@lru_cache(maxsize=4)
def model_words(tokenizer_path: Path) -> frozenset[str]:
    """The whole words (not ``##`` continuations) of a WordPiece ``tokenizer.json``."""
    vocab = json.loads(tokenizer_path.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(word for word in vocab if word.isalpha())


@lru_cache(maxsize=8)
def stems_of(words: frozenset[str]) -> frozenset[str]:
    """The English stems of ``words`` (cached: the model vocabulary is stemmed once)."""
    return frozenset(stem(word) for word in words)


#: The shortest part of a compound read as two known words.
COMPOUND_PART = 4


def is_known_word(word: str, known: Lexicon, common: frozenset[str]) -> bool:
    """Whether a lower-case word is a real word, so never a typo to repair.

    True for a word of the knowledge base or of ``common``, for another form of one (the same
    English stem), for a known word with a common prefix or derivational suffix
    ("uncultured", "executor"), and for two known words run together ("handover").
    """
    stems = (known.stems, stems_of(common))

    def whole(text: str) -> bool:
        return text in known or text in common

    def known_form(text: str, *, inflected: bool) -> bool:
        if whole(text):
            return True
        root = stem(text)
        if inflected and root == text:
            # Only an ending the stemmer removed makes another form: a typo such as "discont"
            # can be the stem of a real word ("discontent").
            return False
        # A short stem matches too much: "tils" -> "til" and "lins" -> "lin" are typos.
        return len(root) >= MIN_LENGTH and any(root in group for group in stems)

    if known_form(word, inflected=True):
        return True
    for prefix in PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= AFFIXED_ROOT:
            if known_form(word[len(prefix) :], inflected=True):
                return True
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= AFFIXED_ROOT:
            if known_form(word[: -len(suffix)], inflected=False):
                return True
    # Two known words run together ("handover", "failover", "cutover"); a typo rarely splits
    # into two words of four letters or more.
    return any(
        whole(word[:cut]) and whole(word[cut:])
        for cut in range(COMPOUND_PART, len(word) - COMPOUND_PART + 1)
    )


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
        common: Correctly spelt words that are never repaired, nor their other forms
            (``model_words``).

    Returns:
        The repaired text and the changes, or ``None`` when nothing was repaired.
    """
    changes: list[tuple[str, str]] = []

    def replace(match: re.Match[str]) -> str:
        typed = match.group(1)
        word = typed.lower()
        if len(word) < MIN_LENGTH or is_known_word(word, known, common):
            return typed
        repaired = closest_word(word, known)
        if repaired is None:
            return typed
        changes.append((typed, repaired))
        return repaired

    text = _CANDIDATE_RE.sub(replace, query)
    return SpellingRepair(text, changes) if changes else None
