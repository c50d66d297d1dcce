"""HTTP error statuses as incidents and docs write them: codes, reason phrases, bare numbers.

``statuses`` finds 4xx and 5xx statuses written as logs and people write them: after ``HTTP``
or ``status``, as a reason phrase ("Bad Gateway" -- only where it reads as one, "fridge temps
gone" is English), or as a bare number in a status's place (``-> 422:``, ``408/504``), never
a quantity or an id ("store 500 till 4", "operator 541") nor a number HTTP does not have
(SMTP's 535). ``status_class`` names a status's class (``5xx``).
"""

from __future__ import annotations

import re
from http import HTTPStatus

from app.evidence.patterns import find_http_statuses, unique

_PHRASE_TO_STATUS = {
    s.phrase.lower(): s.value for s in HTTPStatus if 400 <= s.value < 600 and s.phrase
}


def is_status_phrase(text: str) -> bool:
    """Whether ``text`` is only an HTTP status's reason phrase ("Bad Gateway")."""
    return " ".join(text.split()).lower() in _PHRASE_TO_STATUS


_STATUS_PHRASE_RE = re.compile(
    r"\b("
    + "|".join(re.escape(p) for p in sorted(_PHRASE_TO_STATUS, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
#: A bare 4xx/5xx number that is not part of a code, path, version, key=value or quantity.
_BARE_STATUS_RE = re.compile(
    r"(?<![\w./:=#*$,<>-])(?P<code>[45]\d\d)(?![\w/=%-]|\.\d|,\d|\s*(?:ms|s|items?|records?|lines?|"
    r"bytes|reads|messages|rows|orders?|users?|employees?)\b)"
)
#: A bare number is a status only if HTTP has it (nginx's 499 too): SMTP's 535 "password not
#: accepted" in a mail error is no 5xx.
_KNOWN_STATUSES = frozenset(s.value for s in HTTPStatus) | {499}
_STATUS_PAIR_RE = re.compile(r"\b([45]\d\d)/(?=[45]\d\d\b)")
#: Combined log format: the request line, its status, then the response's size in bytes.
_ACCESS_BYTES_RE = re.compile(r'(?P<status>HTTP/[\d.]+"?\s+\d{3}\s+)\d+')


def statuses(text: str, *, bare: bool = True) -> list[int]:
    """HTTP error statuses in ``text``: as logs write them, as reason phrases, and bare numbers.

    Args:
        text: Any text.
        bare: Also count a lone 4xx/5xx number (``-> 422:``, ``408/504``, ``(503)``). A
            reason phrase counts only when written as a status (``_written_as_status``), in
            a log line as in prose: "feature flag 'x' not found" is English.

    Returns:
        The statuses, in order of appearance, without repeats.
    """
    found = [(0, code) for code in find_http_statuses(text)]
    found += [
        (m.start(), _PHRASE_TO_STATUS[m.group(1).lower()])
        for m in _STATUS_PHRASE_RE.finditer(text)
        if _written_as_status(text, m)
    ]
    if bare:
        spaced = _STATUS_PAIR_RE.sub(r"\1 ", text)  # "408/504" names two statuses
        # An access log's byte count after its status ("HTTP/1.1" 200 412) is no status.
        spaced = _ACCESS_BYTES_RE.sub(r"\g<status>-", spaced)
        found += [
            (m.start(), int(m.group("code")))
            for m in _BARE_STATUS_RE.finditer(spaced)
            if int(m.group("code")) in _KNOWN_STATUSES
            and _in_status_context(spaced, m.start(), m.end())
        ]
    return unique(code for _, code in sorted(found, key=lambda pair: pair[0]))


#: Reason phrases that are HTTP jargon however they are written ("an internal server error
#: from the POS backend"); the others are also plain English ("gone", "conflict", "not found").
PROSE_STATUS_PHRASES = frozenset(
    {
        "bad request",
        "request timeout",
        "unprocessable entity",
        "too many requests",
        "internal server error",
        "bad gateway",
        "service unavailable",
        "gateway timeout",
    }
)
#: Just before a reason phrase, what marks it as an HTTP status in prose ("HTTP 410 Gone").
_STATUS_MARK_RE = re.compile(r"(?:\bhttp|\bstatus|\b[45]\d\d)\W{0,3}$", re.IGNORECASE)


def _written_as_status(text: str, match: re.Match[str]) -> bool:
    """Whether a reason phrase reads as a status, not as a plain word.

    "fridge temps gone", "after the sync conflict" and "not found in reconciliation" are
    English; "Service Unavailable" in capitals, or a phrase after ``HTTP``, ``status`` or a
    4xx/5xx number, is a status, and so is HTTP jargon (``PROSE_STATUS_PHRASES``).
    """
    phrase = match.group(1)
    if phrase.lower() in PROSE_STATUS_PHRASES or all(w[:1].isupper() for w in phrase.split()):
        return True
    return bool(_STATUS_MARK_RE.search(text[max(0, match.start() - 16) : match.start()]))


#: Words after which a bare number in a log line reads as an HTTP status.
STATUS_CONTEXT_WORDS = frozenset(
    {
        "http",
        "status",
        "code",
        "returned",
        "returns",
        "return",
        "got",
        "with",
        "error",
        "errors",
        "responded",
        "response",
        "rejected",
        "failed",
        "fails",
        "a",
        "an",
        "the",
        "raised",
    }
)
_BARE_BETWEEN_WORDS_RE = re.compile(r"(?P<before>[A-Za-z]+)\s+$")
#: Words a number after them identifies or counts, never an HTTP status: "operator 541".
ID_WORDS = frozenset(
    "operator cashier till store stores order orders user customer basket sku item items line "
    "lines id pid port table room version build job ticket row node shard partition worker "
    "thread attempt batch invoice receipt terminal lane aisle sensor".split()
)


def _in_status_context(text: str, start: int, end: int) -> bool:
    """A bare number between two plain words (``store 500 till 4``) is a quantity or an id.

    So is one after a word that names what it numbers (``opened by operator 541``), wherever
    the line goes on.
    """
    match = _BARE_BETWEEN_WORDS_RE.search(text[:start])
    if match is not None and match.group("before").lower() in ID_WORDS:
        return False
    if match is None or match.group("before").lower() in STATUS_CONTEXT_WORDS:
        return True
    return not re.match(r"\s+[A-Za-z]", text[end:])


def status_class(status: int | str) -> str:
    """``5xx`` for 503."""
    return f"{str(status)[0]}xx"
