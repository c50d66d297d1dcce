"""The words of an incident's pieces that phrases are matched on, and what they set aside.

A phrase matches word by word (``words``, ``contains_phrase``). An incident's piece is read
without what would make a phrase match where nothing failed: an error code's own words, the
code a programming fault names (``undefined method `amount'``), the names of the data fields a
request carried (``total=12.40``), an indexed path's container (``lines[3].quantity`` is the
quantity), and codes the reporter sets aside ("not CO-500", "last week's CH-502 is fixed").
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set

from app.evidence.escapes import without_escapes
from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS, find_error_codes, without_codes

_WORD_RE = re.compile(r"[A-Za-z]+|\d+")

#: Inequality as code and logs write it, read as the words a doc uses ("does not equal").
_NOT_EQUAL_RE = re.compile(r"\s*(?:!=|≠|<>|=/=)\s*")


#: An indexed field path: ``lines[3].quantity`` (the container, its index, the field), or a
#: validation error's location list, ``["body", "lines", 1, "quantity"]``.
_FIELD_PATH_RES = (
    re.compile(r"\b(?P<container>[A-Za-z_]\w*)\[\d+\]\.(?P<field>[A-Za-z_]\w*)"),
    # Pydantic's location: ``lines.1.plu``.
    re.compile(r"\b(?P<container>[A-Za-z_]\w*)\.\d+\.(?P<field>[A-Za-z_]\w*)"),
    re.compile(
        r"[\"'](?P<container>[A-Za-z_]\w*)[\"'],\s*\d+,\s*[\"'](?P<field>[A-Za-z_]\w*)[\"']"
    ),
)
#: A data field's name with a plain value (a number, quoted or not, a list, an object, a truth
#: value): ``total=12.40``, ``lines=4``, ``"amount": 23.10``, ``"declared_total": "12.50"``,
#: ``quantity_ok=true``, a Python dict's ``'amount': '2.49'``.
_DATA_KEY_RE = re.compile(
    r"(?<![\w.\-])(?:([\"'])[A-Za-z_][\w.]*\1\s*:|[A-Za-z_][\w.()\[\]]*=(?!=))"
    r"(?=\s*(?:-?\d|[\"']-?\d[\d.,]*[\"']|\[|\{|true\b|false\b|null\b))",
    re.IGNORECASE,
)


#: A socket error's code, read as the words a doc uses: Node's ``connect ECONNREFUSED`` is the
#: doc's "Connection refused".
_ERRNO_WORDS = {
    "ECONNREFUSED": " connection refused ",
    "ECONNRESET": " connection reset ",
    "ETIMEDOUT": " timed out ",
    "ESOCKETTIMEDOUT": " socket timed out ",
    "EHOSTUNREACH": " host unreachable ",
}
_ERRNO_RE = re.compile(r"\b(?:" + "|".join(_ERRNO_WORDS) + r")\b")


def words(text: str) -> tuple[str, ...]:
    """Lower-cased words with every number as ``#``: what phrases are matched on.

    ``!=``, ``≠`` and ``<>`` read as "does not equal": "total 18.40 != sum of lines 18.39" is
    the doc's "total 19.99 does not equal sum of lines 20.00"; a socket error's code as its
    words (``ECONNREFUSED`` as "connection refused").
    """
    text = _NOT_EQUAL_RE.sub(" does not equal ", without_escapes(text))
    text = _ERRNO_RE.sub(lambda m: _ERRNO_WORDS[m.group(0)], text)
    return tuple("#" if w.isdigit() else w.lower() for w in _WORD_RE.findall(text))


def contains_phrase(haystack: Sequence[str], phrase: Sequence[str]) -> bool:
    """Whether the words of ``phrase`` occur in ``haystack`` in order (gaps allowed)."""
    if not phrase:
        return False
    position = 0
    for word in haystack:
        if word == phrase[position]:
            position += 1
            if position == len(phrase):
                return True
    return False


#: A fault's message naming the code that broke: ``undefined method `amount' for nil``, ``has
#: no attribute 'lines'``, ``KeyError: 'total'``, ``(reading 'amount')``.
_FAULT_MEMBER_RE = re.compile(
    r"(?P<lead>undefined (?:local variable or )?method|has no attribute|KeyError:"
    r"|\(reading|undefined (?:index|property|array key):?)\s*[`'\"](?P<name>[\w.$]+)[`'\"]",
    re.IGNORECASE,
)


def without_fault_members(text: str) -> str:
    """``text`` without the names a fault's message gives of the code that broke.

    The name is code, not what failed: "undefined method `amount' for nil:NilClass" in the
    till's checkout is a crash, not the amount family's mismatch.
    """
    return _FAULT_MEMBER_RE.sub(r"\g<lead> ?", text)


#: The unit or type suffix of a Prometheus series' name in a selector or a range:
#: ``http_requests_total{…}``, ``request_duration_seconds_bucket[5m]``.
_METRIC_SUFFIX_RE = re.compile(
    r"(?<=[A-Za-z0-9])(?:_(?:total|count|sum|bucket|seconds|bytes|created|info|ratio))+"
    r"(?=\s*[{\[])"
)


def phrase_words(text: str) -> tuple[str, ...]:
    """The words of an incident's piece that phrases are matched on.

    Neither an error code ("this is NOT POS-422-AMOUNT": its words are the code's, matched as
    a code) nor the code a fault names (``without_fault_members``) is the failure's words, nor
    a series' type suffix: ``http_requests_total{status="422"}`` counts requests, it says
    nothing of a total.
    """
    return words(_METRIC_SUFFIX_RE.sub("", without_fault_members(without_codes(text))))


#: A field's short name in code: ``lines[4].qty`` is the quantity.
_SHORT_FIELD_NAMES = {"qty": "quantity", "amt": "amount"}


def said_words(text: str, fields: Set[str]) -> tuple[str, ...]:
    """The words a piece says about what failed, leaving out the names of what it carried.

    A data field's name with a plain value (``total=12.40`` in a request line) is what the
    request carried, not what failed; nor is an indexed path's container when the field after
    it is one a family's error body names (``fields``): ``lines[3].quantity exceeds 999`` is
    the quantity failing, where ``lines[2].plu is required`` is a line missing its PLU.
    """

    def container(match: re.Match[str]) -> str:
        named = {_SHORT_FIELD_NAMES.get(w, w) for w in words(match.group("field"))} & fields
        return f" {match.group('field')}" if named else match.group(0)

    text = _DATA_KEY_RE.sub(" ", text)
    for path in _FIELD_PATH_RES:
        text = path.sub(container, text)
    return phrase_words(text)


#: A code the reporter sets aside: denied ("not CO-500", "rule out PAY-408") or past ("last
#: week's CH-502", "CH-502 (the crash) is fixed"). Said, but not a guess at this incident.
_DISMISSED_BEFORE_RE = re.compile(
    r"(?:\bnot|\bisn'?t|\bwasn'?t|\bnothing to do with|\bunrelated to|\brul(?:e[sd]?|ing) out"
    r"|\blast (?:week|month|night|time)'?s?|\byesterday'?s|\bprevious|\bearlier|\bold)"
    r"(?:\s+(?:a|an|the|our|that|this|like))?\W{0,3}\s*$",
    re.IGNORECASE,
)
_DISMISSED_AFTER_RE = re.compile(
    r"^\W{0,3}\s*(?:\([^)]{0,60}\)\s*)?(?:is|was|has been|got|were|are)\s+(?:now\s+)?"
    r"(?:fixed|resolved|closed|done|mitigated|over|gone|ruled out|not (?:it|the cause))\b",
    re.IGNORECASE,
)


def dismissed(text: str, code: str) -> bool:
    """Whether every mention of ``code`` in the reporter's ``text`` sets it aside."""
    spots = list(re.finditer(re.escape(code), text))
    return bool(spots) and all(
        _DISMISSED_BEFORE_RE.search(text[max(0, m.start() - 40) : m.start()])
        or _DISMISSED_AFTER_RE.search(text[m.end() : m.end() + 80])
        for m in spots
    )


def without_dismissed_codes(
    text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS
) -> str:
    """The reporter's ``text`` without the codes it sets aside and what it says they were.

    "Last week's CH-502 (chiller monitor crash) is fixed. Today: the server room AC alarms"
    is searched as "Last week's is fixed. Today: the server room AC alarms".
    """
    for code in find_error_codes(text, patterns):
        if dismissed(text, code):
            text = re.sub(rf"{re.escape(code)}(?:\s*\([^)]{{0,60}}\))?", " ", text)
    return text


#: Where a validation error names the field that failed: ``"field": "customer.email"``,
#: ``"name": "customer.loyalty_card"``, ``"loc": ["body", "customer", "email"]``, ``field
#: 'lines'``.
_NAMED_FIELD_RE = re.compile(
    r"[\"'](?:field|name|param|parameter|pointer|loc)[\"']\s*:\s*"
    r"(?:\[(?P<loc>[^\]]*)\]|[\"'](?P<field>[^\"']+)[\"'])"
    r"|\bfield [`'\"](?P<quoted>[^`'\"]+)[`'\"]",
    re.IGNORECASE,
)


def named_fields(text: str) -> list[str]:
    """The fields a validation error in ``text`` names as failing.

    A JSON pointer names its last member (``/data/attributes/currency`` is the currency).
    """
    found = (
        " ".join(m.group("loc").split(","))
        if m.group("loc")
        else m.group("field") or m.group("quoted")
        for m in _NAMED_FIELD_RE.finditer(text)
    )
    return [f.rstrip("/").rsplit("/", 1)[-1][:80] if f.startswith("/") else f[:80] for f in found]


#: Text between quotation marks: "…", “…”, ‘…’ or '…' (an apostrophe inside a word opens none).
_QUOTED_RE = re.compile(
    r"[\"“]([^\"“”\n]{6,200})[\"”]|(?<![A-Za-z])['‘]([^'‘’\n]{6,200})['’](?![A-Za-z])"
)


def quoted(text: str) -> list[tuple[str, ...]]:
    """The words of each passage ``text`` quotes: what a screen or a system said, verbatim."""
    return [words(a or b) for a, b in _QUOTED_RE.findall(text)]
