"""What evidence text is scanned for: error codes, HTTP statuses, levels, volatile parts.

Error codes match configurable regular expressions (``DEFAULT_ERROR_CODE_PATTERNS`` unless the
``RCA_ERROR_CODE_PATTERNS`` setting says otherwise); HTTP statuses are 4xx and 5xx only, in the
ways logs write them; ``normalise`` replaces the parts of a line that change between repeats of
one failure (uuids, timestamps, IPs, hex ids, numbers) so repeats compare equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from http import HTTPStatus
from typing import TypeVar

_T = TypeVar("_T")

#: Error codes as the knowledge base writes them: ``CO-500``, ``PAY-408``, ``POS-503-PLU``.
#: A few well-known acronyms that look the same (``SHA-256``) are excluded.
DEFAULT_ERROR_CODE_PATTERNS: tuple[str, ...] = (
    r"\b(?!(?:SHA|AES|RSA|UTF|ISO|RFC|TLS|SSL|HTTP|TCP|UDP|ECDSA)-)"
    r"[A-Z]{2,6}-\d{3}(?:-[A-Z]{2,12})?\b",
)

#: An exception type written inline in a log line.
EXCEPTION_TYPE_RE = re.compile(
    r"(?<![\w.$])(?P<type>(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*?"
    r"(?:Error|Exception|Timeout|Exit|Interrupt|Fault))(?![\w$])(?::\s*(?P<message>.*))?"
)

ERROR_LEVELS = frozenset(
    {"ERROR", "ERR", "SEVERE", "FATAL", "CRITICAL", "CRIT", "PANIC", "EMERG", "ALERT"}
)
WARN_LEVELS = frozenset({"WARN", "WARNING"})
INFO_LEVELS = frozenset({"INFO", "NOTICE", "DEBUG", "TRACE", "FINE", "FINER", "FINEST"})
_ALL_LEVELS = "|".join(sorted(ERROR_LEVELS | WARN_LEVELS | INFO_LEVELS, key=len, reverse=True))
LEVEL_RE = re.compile(rf"(?<![\w-])(?P<level>{_ALL_LEVELS})(?![\w-])")
#: A level written in lower case: bracketed, as a field, or as a word with a colon among the
#: line's first few words (``pos-api debug: sum ok``, ``chiller-monitor: fatal: exiting``).
LEVEL_LOWER_RE = re.compile(
    rf"(?:\[|\blevel=|\bseverity=|\blvl=|^(?:\S+\s+){{0,3}}(?=(?i:{_ALL_LEVELS}):\s))"
    rf"\"?(?P<level>(?i:{_ALL_LEVELS}))(?![\w-])"
)

_TIMESTAMP_PATTERNS = (
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
    r"\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?",
    r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}",
    r"\d{4}-\d{2}-\d{2}",
    r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)?",
)
_TIMESTAMP_RE = re.compile("|".join(rf"(?:{p})" for p in _TIMESTAMP_PATTERNS))
LEADING_TIMESTAMP_RE = re.compile(rf"^\s*\[?(?:{_TIMESTAMP_RE.pattern})\]?")
_UUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")
IP_RE = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b")
_HEX_RE = re.compile(
    r"\b(?:0x[0-9a-fA-F]+|(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{5,})\b"
)
#: Numbers, also with a unit glued on (``30000ms``, ``1.2s``, ``88%``).
_NUMBER_RE = re.compile(
    r"(?<![\w-])\d+(?:[.,]\d+)?(?=(?:ms|us|ns|s|m|h|d|k|kb|mb|gb|x|%)?(?![\w]))"
)
SPACE_RE = re.compile(r"\s+")

_STATUS_PHRASES = "|".join(
    re.escape(s.phrase) for s in HTTPStatus if 400 <= s.value < 600 and s.phrase
)
_STATUS_RES = (
    re.compile(r"\bHTTP(?:/\d(?:\.\d)?)?\"?\s*(?P<code>[1-5]\d\d)\b"),
    re.compile(
        r"\b(?:status|status_code|statusCode|http_status|http\.status_code|code)"
        r"\"?\s*[=:]\s*\"?(?P<code>[1-5]\d\d)\b"
    ),
    re.compile(
        r"(?:->|=>|\breturned|\breturning|\bresponded(?: with)?|\bresponding(?: with)?"
        r"|\bresponds(?: with)?|\breplied(?: with)?|"
        r"\banswered(?: with)?|\breceived|\brejected(?: with)?|\bwith status(?: code)?|"
        r"\bstatus(?: code)?)\s+\"?(?P<code>[1-5]\d\d)\b"
    ),
    re.compile(rf"\b(?P<code>[1-5]\d\d)\s+(?:{_STATUS_PHRASES})\b", re.IGNORECASE),
    # The phrase, then the code in brackets: "PLU service unavailable (503)".
    re.compile(rf"\b(?:{_STATUS_PHRASES})\s*[(\[](?P<code>[1-5]\d\d)[)\]]", re.IGNORECASE),
    # A status's measure names it too: "502 rate 31%", "503 count 112".
    re.compile(r"\b(?P<code>[45]\d\d)\s+(?:for|from|on|errors?|responses?|rate|ratio|count)\b"),
    # The same in the other languages reports arrive in ("503 från PLU-tjänsten", "503-Fehler",
    # "503 du service"); short words that are also other things ("da", "no", "en") are left out.
    re.compile(
        r"\b(?P<code>[45]\d\d)(?:\s+|-)(?:från|fra|von|vom|beim?|vanaf|van|bij|desde|del|depuis"
        r"|sur|du|des|dal|dalla|dai|od|fehler[n]?|fehlermeldung|erreurs?|errores|errori|erros?"
        r"|fouten?|fel|feil|fejl|błąd|błędy)\b",
        re.IGNORECASE,
    ),
    # An error word, then the status: "Fehler 503", "erreur 502", "error 503", "fout 500".
    re.compile(
        r"\b(?:error|fehler|erreur|errore|erro|fout|fel|feil|fejl|błąd|chyba)\s*:?\s*"
        r"(?:HTTP\s*)?(?P<code>[45]\d\d)\b(?![\w.,-]\d)",
        re.IGNORECASE,
    ),
    # What a service does with a status, in a sentence: "the provider returns 502".
    re.compile(
        r"\b(?:returns?|answers|answering|throws|throwing|gives|giving|serves|serving)\s+"
        r"(?:an?\s+|HTTP\s+)?(?P<code>[45]\d\d)\b(?!\s*(?:ms|s|items?|records?|lines?|bytes"
        r"|rows|orders?|users?|results?|products?)\b)",
        re.IGNORECASE,
    ),
    # Statuses counted in the plural ("tills getting 503s"), not durations ("after 500s").
    re.compile(
        r"(?<![\w.:=/-])(?<!after )(?<!took )(?<!for )(?<!every )(?<!timeout )(?<!in )"
        r"(?P<code>[45]\d\d)s\b(?!\s+(?:ago|later|timeout))"
    ),
    # An access-log request line: the method, the path, then the status ("POST /sales 422").
    re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/\S*\s+(?P<code>[1-5]\d\d)\b"),
)


@lru_cache(maxsize=32)
def compile_code_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """Compile error-code patterns once.

    Args:
        patterns: Regular expressions; each match (group 0) is an error code.

    Returns:
        The compiled patterns.
    """
    return tuple(re.compile(p) for p in patterns)


def find_error_codes(text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS) -> list[str]:
    """Error codes in ``text``, in order of appearance, without repeats.

    Args:
        text: Any text.
        patterns: Error-code regular expressions.

    Returns:
        The codes found.
    """
    found: list[tuple[int, str]] = []
    for pattern in compile_code_patterns(tuple(patterns)):
        found.extend((m.start(), m.group(0)) for m in pattern.finditer(text))
    return unique(code for _, code in sorted(found))


def without_codes(text: str, patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS) -> str:
    """``text`` with its error codes left out: a code is matched as a code, not as words."""
    for pattern in compile_code_patterns(tuple(patterns)):
        text = pattern.sub(" ", text)
    return text


def find_http_statuses(text: str) -> list[int]:
    """HTTP error statuses (4xx and 5xx) mentioned in ``text``, in order, without repeats.

    Args:
        text: Any text.

    Returns:
        The statuses found.
    """
    found: list[tuple[int, int]] = []
    for pattern in _STATUS_RES:
        for match in pattern.finditer(text):
            code = int(match.group("code"))
            if 400 <= code < 600:
                found.append((match.start("code"), code))
    return unique(code for _, code in sorted(found))


def status_text(code: int) -> str:
    """``HTTP 503 Service Unavailable`` (the phrase when the code is a known one).

    Args:
        code: An HTTP status code.

    Returns:
        The status as text.
    """
    try:
        return f"HTTP {code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


def normalise(text: str) -> str:
    """Replace volatile parts (uuids, timestamps, IPs, hex ids, numbers) with placeholders.

    Error codes such as ``PAY-408`` stay intact: numbers joined to a word by ``-`` are kept.

    Args:
        text: Any text.

    Returns:
        The normalised text, white space collapsed.
    """
    text = _UUID_RE.sub("<uuid>", text)
    text = _TIMESTAMP_RE.sub("<ts>", text)
    text = IP_RE.sub("<ip>", text)
    text = _HEX_RE.sub("<hex>", text)
    text = _NUMBER_RE.sub("<n>", text)
    return SPACE_RE.sub(" ", text).strip()


def is_record_start(line: str) -> bool:
    """Whether ``line`` starts a new log record (timestamp, level or JSON object first).

    Args:
        line: One line of a log or trace.

    Returns:
        True when the line opens a record rather than continuing the one above.
    """
    stripped = line.lstrip()
    if stripped.startswith("{") or LEADING_TIMESTAMP_RE.match(line):
        return True
    match = LEVEL_RE.search(line[:60]) or LEVEL_LOWER_RE.search(line[:60])
    return bool(match)


def normal_code(code: str | None) -> str:
    """Upper-case without separators, so ``pay 408`` equals ``PAY-408``."""
    return "".join(ch for ch in (code or "").upper() if ch.isalnum())


@lru_cache(maxsize=64)
def written_code_re(code: str) -> re.Pattern[str]:
    """How a reporter may type a known ``code`` in prose: ``co500``, ``CO_500``, ``pos 503 plu``.

    Every part in order, joined by a dash, an underscore, a space or nothing, in any case; not
    inside a longer word or number.
    """
    parts = [re.escape(p) for p in re.split(r"[-_\s]+", code.strip()) if p]
    return re.compile(
        r"(?<![A-Za-z0-9])" + r"[-_ ]?".join(parts) + r"s?(?![A-Za-z0-9])", re.IGNORECASE
    )


def unique(items: Iterable[_T]) -> list[_T]:
    """``items`` in order, repeats dropped.

    Args:
        items: Hashable items.

    Returns:
        The first occurrence of each item.
    """
    seen: set[_T] = set()
    out: list[_T] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
