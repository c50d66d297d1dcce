"""Keyword tokenisation for BM25: English words stemmed, error codes kept whole and in parts.

Incident text mixes prose with identifiers. Prose becomes lower-case words minus English stop
words, stemmed with PyStemmer (``payments`` -> ``payment``). Identifiers are kept whole *and*
split: ``ZeroDivisionError`` also yields ``zero``/``division``/``error``, ``apply_discount`` also
``apply``/``discount``. Error codes are the strongest signal an incident carries, and people type
them many ways (``POS-503-PLU``, ``pos 503 plu``, ``POS503PLU``, ``pos_503_plu``, ``PAY408``), so
every code-shaped run of text yields its canonical form (``pos-503-plu``) and each shorter prefix
(``pos-503``), plus its parts as ordinary tokens. Documents and queries use the same function, so a
code written differently still meets the canonical token in the index.

Only runs that look like codes where they stand become code tokens (``tokenize``): letters written
in capitals (``CH 502``, ``PAY408``), or lower-case letters joined to a 3-4 digit number by ``-``,
``_`` or nothing (``pos_422_lines``, ``co500``). Prose ("since 1979", "taking 400 mg") and log
values (``pid-28601``, ``ca-98``) are words and numbers. ``find_codes`` stays lenient ("pay 408"),
because the engine only uses it to look codes up among the knowledge base's own codes.
Words mixing letters and digits (``0x14000000``, ``blk_38865049064139660``) stay whole: cutting
them at letter/digit boundaries makes small number pieces that match unrelated text. Tokens of one
character are dropped.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN

#: A code-shaped run: 2-6 letters, a 2-5 digit number, then up to two more short parts, each
#: optionally separated by ``-``, ``_`` or one space (``PAY-408``, ``pay 408``, ``POS422QTY``).
_CODE_RE = re.compile(
    r"(?<![a-z0-9])([a-z]{2,6})[-_ ]?(\d{2,5})(?!\d)"
    r"((?:[-_ ]?[a-z0-9]{2,12}){0,2})(?![a-z0-9])",
)
_PART_RE = re.compile(r"[a-z]+|\d+")
_TRAIL_RE = re.compile(r"[-_ ]?([a-z]+|\d+)")
#: Identifiers as written: letters, digits and underscores (dots and dashes split them).
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")
#: CamelCase and letter/digit boundaries: ``PluLookupException`` -> Plu, Lookup, Exception.
_SUBWORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

#: A piece with both a letter and a digit (a hex value, an id): kept whole.
_MIXED_RE = re.compile(r"[A-Za-z].*\d|\d.*[A-Za-z]")

STOP_WORDS: frozenset[str] = frozenset(STOPWORDS_EN)

_local = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    # PyStemmer objects are not documented as thread-safe; one per thread is cheap.
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = Stemmer.Stemmer("english")
        _local.stemmer = stemmer
    return stemmer


def stem(word: str) -> str:
    """The English stem of a lower-case word (``payments`` -> ``payment``)."""
    return str(_stemmer().stemWord(word))


def canonical_code(code: str) -> str:
    """The canonical token of an error code: lower case, parts joined by ``-``.

    Args:
        code: An error code as written anywhere (``POS-503-PLU``, ``pos_503_plu``).

    Returns:
        ``pos-503-plu``-style text; letter/digit boundaries become dashes (``PAY408`` ->
        ``pay-408``).
    """
    return "-".join(_PART_RE.findall(code.lower()))


def _looks_like_a_code(text: str, match: re.Match[str]) -> bool:
    """Whether a code-shaped run is written like a code (see the module docstring)."""
    letters = text[match.start(1) : match.end(1)]
    if letters.isupper():
        return True
    joined = text[match.end(1) : match.start(2)] in ("", "-", "_")
    return joined and 3 <= len(match.group(2)) <= 4


def find_codes(text: str, strict: bool = False) -> list[str]:
    """Every canonical error-code candidate in ``text``, longest form first per match.

    A match with trailing parts yields each prefix too, because a trailing part typed after a
    space may be an ordinary word (``CH 502 paging`` -> ``ch-502-paging`` and ``ch-502``).

    Args:
        text: Free text (a query or a document).
        strict: Keep only runs written like codes (capitals, or a joined 3-4 digit number);
            the default also accepts prose-like runs ("pay 408") for lookups of known codes.

    Returns:
        Distinct candidates in order of appearance.
    """
    found: list[str] = []
    for match in _CODE_RE.finditer(text.lower()):
        if strict and not _looks_like_a_code(text, match):
            continue
        parts = [match.group(1), match.group(2)]
        parts += _TRAIL_RE.findall(match.group(3))
        for end in range(len(parts), 1, -1):
            candidate = "-".join(parts[:end])
            if candidate not in found:
                found.append(candidate)
    return found


@lru_cache(maxsize=1 << 18)
def _identifier_tokens(raw: str) -> tuple[str, ...]:
    """The tokens of one identifier as written; cached, since a corpus repeats its words."""
    stemmer = _stemmer()
    pieces = [p for p in raw.split("_") if p]
    subwords = [
        s.lower()
        for piece in pieces
        for s in ([piece] if _MIXED_RE.search(piece) else _SUBWORD_RE.findall(piece))
    ]
    tokens: list[str] = []
    whole = raw.lower()
    if len(subwords) > 1 and whole not in STOP_WORDS:
        # The identifier as written (``apply_discount``, ``zerodivisionerror``).
        tokens.append(whole)
    for word in subwords:
        if word in STOP_WORDS or len(word) < 2:
            continue
        tokens.append(word if any(c.isdigit() for c in word) else stemmer.stemWord(word))
    return tuple(tokens)


def _word_tokens(text: str) -> list[str]:
    return [token for raw in _WORD_RE.findall(text) for token in _identifier_tokens(raw)]


def tokenize(text: str) -> list[str]:
    """BM25 tokens of ``text``: canonical error codes first, then words and identifier parts.

    Args:
        text: A query or a document.

    Returns:
        Tokens with repeats kept (BM25 counts term frequency).
    """
    return find_codes(text, strict=True) + _word_tokens(text)
