"""Expected signals of a knowledge doc: what an incident would show if this family were the cause.

Derived at ingest from the doc's own text, with the extractors of ``app.evidence.signals`` and
no table or code per family, so a new entry gets its signals with no code change:

- ``services``: the ``Service:`` line's name and aliases (``Service: pos-api (aliases: pos,
  till-api)``) or a runbook's ``service:`` / ``services:`` front matter;
- ``exceptions`` (``exception_examples``: those given as examples, "e.g." or "or similar",
  which confirm but never contradict), ``statuses`` (and ``status_classes``), ``paths``,
  ``files``, ``identifiers``:
  found in Component, Symptoms, Cause and Evidence;
- ``phrases``: the quoted strings of those fields (``"upstream prematurely closed connection"``),
  minus those that are only an exception name or a status's reason phrase (``"bad gateway"``
  is the 502 every proxy answers with, not what tells this family apart).
- ``conditions``: the platform failure conditions they name (``out of memory``; the table is
  ``app.evidence.trouble.FAILURE_CONDITIONS``).

A clause that contrasts the family with something else says what the family is *not*: one
with a negation (``unlike a 502``, ``not the POS till API``, ``no card traffic``) or naming
another error code (``CO-500 is the online checkout_service.py``) gives no signals. Quoted
text is protected first, so ``"total does not equal …"`` stays a phrase. Where the contrast
is explicit -- ``unlike``, ``differs from``, ``rather than``, ``instead of``, or another
family's code -- the statuses and files it names are kept as ``contrast_statuses`` and
``contrast_files``: seeing them speaks *against* the family (``unlike a 502`` in the timeout
family; ``checkout_service.py`` in the till family, which names it as the web shop's file).
A bare negation is not such a contrast: "a 502 alone does not prove this" still expects a 502.

The result is stored with the chunk as JSON in the ``signals`` metadata key (Chroma metadata
values are scalars), so it is deterministic, versioned with the chunk and visible in
``GET /api/knowledge``. A runbook may declare its own signals in front matter
(``exceptions: ReadTimeout, SocketTimeoutException``); declared ones are added to the derived.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from app.evidence.patterns import find_error_codes, unique
from app.evidence.signals import (
    exception_types,
    files,
    identifiers,
    paths,
)
from app.evidence.statuses import is_status_phrase, status_class, statuses
from app.evidence.trouble import failure_conditions

#: The doc fields signals are derived from (the Error line, Solution and Validation are not
#: what an incident shows).
SIGNAL_FIELDS = ("Component", "Symptoms", "Cause", "Evidence")
#: Signal kinds in stored order; ``services`` first because it names the component.
KINDS = (
    "services",
    "exceptions",
    "exception_examples",
    "statuses",
    "status_classes",
    "paths",
    "files",
    "identifiers",
    "phrases",
    "conditions",
    "contrast_statuses",
    "contrast_files",
)
METADATA_KEY = "signals"
_QUOTED_RE = re.compile(r"[\"“”]([^\"“”\n]{2,120})[\"“”]")
_SERVICE_LINE_RE = re.compile(
    r"^\s*(?P<name>[^()]+?)\s*(?:\((?:aliases?:)?\s*(?P<aliases>[^)]*)\))?\s*$"
)
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
#: Clause boundaries: punctuation, and the words that join a symptom to its explanation or to
#: a contrast ("rejected with HTTP 422 because the total does not match": the first part is
#: the family's own symptom and must not be dropped with the negated second part).
_CLAUSE_SPLIT_RE = re.compile(r"[;,()]|\.(?=\s|$)|\n|\b(?:because|but|whereas|while)\b")
_CONTRAST_RE = re.compile(
    r"\b(?:unlike|not|no|never|rather than|instead of|differs? from|apart from|except)\b",
    re.IGNORECASE,
)
#: A contrast that names what the family is set against (not a hedge such as "does not prove").
_EXPLICIT_CONTRAST_RE = re.compile(
    r"\b(?:unlike|rather than|instead of|differs? from)\b", re.IGNORECASE
)
#: A clause giving examples (``NullPointerException, KeyError or similar``): its exceptions
#: confirm the family when seen, but another exception does not contradict it.
_EXAMPLE_RE = re.compile(
    r"\b(?:e\.g\.|such as|for example|or similar|or the like|varies|for instance)",
    re.IGNORECASE,
)
_PLACEHOLDER = "\x00{}\x00"
_PLACEHOLDER_RE = re.compile("\x00(\\d+)\x00")

Signals = dict[str, list[str]]


def parse_service_line(value: str) -> list[str]:
    """The names a ``Service:`` value declares: the canonical name first, then its aliases.

    Args:
        value: ``checkout-service (aliases: checkout, web-shop-checkout)``; aliases optional.

    Returns:
        Lower-cased names, canonical first, without repeats; empty when none parse.
    """
    match = _SERVICE_LINE_RE.match(value or "")
    if not match:
        return []
    names = [match.group("name"), *(match.group("aliases") or "").split(",")]
    return unique(n.strip().lower() for n in names if _NAME_RE.match(n.strip().lower()))


def split_list(value: str) -> list[str]:
    """A front-matter list: ``a, b`` or ``[a, b]``; quotes around items are dropped."""
    inner = value.strip().removeprefix("[").removesuffix("]")
    return [p.strip().strip("\"'") for p in inner.split(",") if p.strip().strip("\"'")]


def derive_signals(
    fields: Mapping[str, str],
    services: Iterable[str] = (),
    declared: Mapping[str, Iterable[str]] | None = None,
) -> Signals:
    """The expected signals of one doc.

    Args:
        fields: Field name -> text (``Component``, ``Symptoms``, ``Cause``, ``Evidence``; a
            runbook passes its section text as ``Evidence``).
        services: The service names the doc declares (canonical first).
        declared: Signals declared explicitly (front matter), by kind; added to the derived.

    Returns:
        Kind -> values, every kind of ``KINDS`` present (possibly empty), deterministic order.
    """
    raw = "\n".join(fields.get(name, "") for name in SIGNAL_FIELDS if fields.get(name))
    text = own_clauses(raw, fields.get("Code", ""))
    contrast = contrast_clauses(raw, fields.get("Code", ""))
    quoted = [q.strip() for q in _QUOTED_RE.findall(text)]
    found_statuses = [str(s) for s in statuses(text)]
    examples = [
        e
        for sentence in re.split(r"(?<=[.;])\s+", text)
        if _EXAMPLE_RE.search(sentence)
        for e in exception_types(sentence)
    ]
    signals: Signals = {
        "services": unique(s.lower() for s in services),
        "exceptions": exception_types(text),
        "exception_examples": unique(examples),
        "statuses": found_statuses,
        "status_classes": unique(status_class(s) for s in found_statuses),
        "paths": paths(text),
        "files": files(text),
        "identifiers": identifiers(text),
        "phrases": unique(
            q for q in quoted if exception_types(q) != [q] and q.strip() and not is_status_phrase(q)
        ),
        "conditions": failure_conditions(text),
    }
    signals["contrast_statuses"] = [
        str(v) for v in statuses(contrast) if str(v) not in found_statuses
    ]
    signals["contrast_files"] = [f for f in files(contrast) if f not in signals["files"]]
    for kind, values in (declared or {}).items():
        if kind in signals:
            signals[kind] = unique([*signals[kind], *(str(v) for v in values)])
    if declared and declared.get("statuses"):
        signals["status_classes"] = unique(status_class(s) for s in signals["statuses"])
    return signals


def own_clauses(text: str, own_code: str = "") -> str:
    """``text`` without the clauses that contrast the family with something else.

    Args:
        text: Doc field text.
        own_code: The doc's own error code (naming it is not a contrast).

    Returns:
        The remaining clauses, one per line, quoted strings intact.
    """
    return _clauses(text, own_code, contrasting=False)


def contrast_clauses(text: str, own_code: str = "") -> str:
    """The clauses of ``text`` that set the family explicitly against something else.

    ``unlike a 502 where it answers with an error``, ``CO-500 is the online
    checkout_service.py``: an explicit contrast word or another family's code.
    """
    return _clauses(text, own_code, contrasting=True)


def _clauses(text: str, own_code: str, *, contrasting: bool) -> str:
    quotes: list[str] = []

    def protect(match: re.Match[str]) -> str:
        quotes.append(match.group(0))
        return _PLACEHOLDER.format(len(quotes) - 1)

    protected = _QUOTED_RE.sub(protect, text)
    kept = []
    for clause in _CLAUSE_SPLIT_RE.split(protected):
        if not clause.strip():
            continue
        other_code = any(code != own_code for code in find_error_codes(clause))
        if contrasting:
            if other_code or _EXPLICIT_CONTRAST_RE.search(clause):
                kept.append(clause.strip())
        elif not other_code and not _CONTRAST_RE.search(clause):
            kept.append(clause.strip())
    return _PLACEHOLDER_RE.sub(lambda m: quotes[int(m.group(1))], "\n".join(kept))


def signals_json(signals: Signals) -> str:
    """The stored form: compact JSON with kinds in ``KINDS`` order."""
    return json.dumps({k: signals.get(k, []) for k in KINDS}, separators=(",", ":"))


def read_signals(metadata: Mapping[str, Any]) -> Signals:
    """A chunk's expected signals from its metadata; empty kinds when it has none.

    Older chunks (ingested before signals existed) get signals derived from their stored
    fields (``component``, ``symptoms``, ``cause``, ``evidence``, ``services``).
    """
    raw = metadata.get(METADATA_KEY)
    parsed: dict[str, Any] = {}
    if isinstance(raw, str) and raw:
        try:
            loaded = json.loads(raw)
        except ValueError:
            loaded = {}
        parsed = loaded if isinstance(loaded, dict) else {}
    elif isinstance(raw, Mapping):
        parsed = dict(raw)
    if raw is None:
        # Chunks ingested before signals existed: derive them from the stored fields now.
        fields = {name: str(metadata.get(name.lower()) or "") for name in SIGNAL_FIELDS}
        fields["Code"] = str(metadata.get("error_code") or "")
        return derive_signals(fields, doc_services(metadata))
    signals = {k: [str(v) for v in parsed.get(k) or []] for k in KINDS}
    if not signals["services"]:
        signals["services"] = doc_services(metadata)
    return signals


def doc_services(metadata: Mapping[str, Any]) -> list[str]:
    """The service names a chunk declares (``services`` JSON list, else ``service``)."""
    raw = metadata.get("services")
    if isinstance(raw, str) and raw.startswith("["):
        try:
            names = json.loads(raw)
        except ValueError:
            names = []
        if isinstance(names, list):
            return unique(str(n).lower() for n in names)
    single = metadata.get("service")
    return [str(single).lower()] if single else []
