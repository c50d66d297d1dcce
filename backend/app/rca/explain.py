"""The diagnosis in words: the claims, alternatives and missing evidence a draft states.

- ``evidence_claims``: one claim per piece of incident evidence that confirms a candidate --
  the decisive log line, the frame, the field, the collected series -- quoting it: first the
  record where each of the family's own failure signals shows first (its exception, code,
  condition, phrase before its status), then pieces that confirm more (and non-routine ones);
- ``for_and_against``: what supports an alternative and what speaks against it, or "no incident
  evidence" when only similarity brought it up;
- ``missing_evidence``: the expected signals the incident does not show (never one it shows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.evidence.signals import (
    CODE,
    CONDITION,
    EXCEPTION,
    FIELD_CODE,
    FILE,
    IDENTIFIER,
    PATH,
    PHRASE,
    SERVICE,
    STATUS,
    STATUS_CLASS,
)
from app.rca.diagnosis import Candidate, SignalHit
from app.rca.evidence import evidence_position
from app.rca.schema import Citation, Claim

MAX_EVIDENCE_CLAIMS = 5
MAX_MISSING = 8
#: Incident text is quoted, not copied whole: a 4,000-character message stays readable.
MAX_QUOTE = 500


def clip(text: str, limit: int = MAX_QUOTE) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis when it was longer."""
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def describe(hit: SignalHit) -> str:
    """A signal as a reader says it: ``HTTP 503``, ``ReadTimeout``, ``service pos-api``."""
    if hit.kind in (STATUS, STATUS_CLASS):
        return f"HTTP {hit.signal}"
    if hit.kind == SERVICE and hit.observed:
        return f"service {hit.observed} (a caller or neighbour of {hit.signal})"
    if hit.kind == SERVICE:
        return f"service {hit.signal}"
    if hit.kind == PHRASE:
        return f'"{hit.signal}"'
    if hit.kind == CODE:
        return f"error code {hit.signal}"
    return hit.signal


def evidence_claims(
    candidate: Candidate, texts: Mapping[str, str], limit: int = MAX_EVIDENCE_CLAIMS
) -> list[Claim]:
    """Claims citing the incident evidence that confirms ``candidate``.

    Args:
        candidate: A diagnosed candidate.
        texts: Evidence id -> its text (incident pieces and collected items).
        limit: Most claims returned.

    Returns:
        One claim per confirming piece of evidence, the most telling first.
    """
    by_id: dict[str, list[SignalHit]] = {}
    weak: dict[str, bool] = {}
    for hit in candidate.confirmed:
        for evidence_id in hit.evidence_ids:
            by_id.setdefault(evidence_id, []).append(hit)
            weak[evidence_id] = hit.weak and weak.get(evidence_id, True)
    by_count = sorted(
        by_id, key=lambda i: (weak.get(i, False), -len(by_id[i]), i == "incident:message")
    )
    order = list(dict.fromkeys([*_first_records(candidate), *by_count]))
    claims: list[Claim] = []
    for evidence_id in order:
        text = texts.get(evidence_id)
        if not text:
            continue
        shown = ", ".join(dict.fromkeys(describe(h) for h in by_id[evidence_id]))
        quote = clip(text)
        citations = [Citation(id=evidence_id, quote=quote)]
        detail = _detail_line(evidence_id, texts)
        if detail is not None:
            citations.append(Citation(id=detail[0], quote=clip(detail[1])))
            quote = f"{quote} {detail[1].strip()}"
        claims.append(Claim(text=f"The incident shows {shown}: {clip(quote)}", evidence=citations))
        if len(claims) >= limit:
            break
    return claims


#: The kinds of signal that say what failed, most telling first.
_FAILURE_ORDER = (EXCEPTION, CODE, CONDITION, PHRASE, FILE, IDENTIFIER, STATUS)


def _first_records(candidate: Candidate) -> list[str]:
    """Where each failure signal first shows in a record, the most telling kind first.

    A failure repeated fifty times in a long log, and the callers' errors it caused, would
    otherwise fill the claims before the line that says what failed: the payment client's
    first ``SocketTimeoutException`` leads the checkout's ``504 … payment=timeout`` lines.
    """
    hits = sorted(
        (h for h in candidate.confirmed if h.kind in _FAILURE_ORDER and not h.weak),
        key=lambda h: _FAILURE_ORDER.index(h.kind),
    )
    firsts = [
        min(records, key=evidence_position)
        for h in hits
        if (
            records := [
                i for i in h.evidence_ids if i.startswith(("incident:log:", "incident:stack:"))
            ]
        )
    ]
    return list(dict.fromkeys(firsts))


_FRAME_START = ("File ", "at ", "Traceback", "Caused by")


def _detail_line(evidence_id: str, texts: Mapping[str, str]) -> tuple[str, str] | None:
    """The indented line right under a stack-trace line: its message or detail, if any.

    Validation errors print the field on one line and what is wrong with it on the next
    (``quantity`` / ``  Input should be greater than 0``); both belong to one claim.
    """
    prefix, _, number = evidence_id.rpartition(":")
    if prefix != "incident:stack" or not number.isdigit():
        return None
    next_id = f"{prefix}:{int(number) + 1}"
    text = texts.get(next_id)
    if not text or not text[:1].isspace() or text.strip().startswith(_FRAME_START):
        return None
    return next_id, text


def for_and_against(candidate: Candidate) -> str:
    """``supported by …; against: …`` or ``no incident evidence (similarity 0.45 only)``."""
    parts = []
    if candidate.confirmed:
        shown = ", ".join(
            f"{describe(h)} ({', '.join(h.evidence_ids[:2])})" for h in candidate.confirmed[:4]
        )
        parts.append(f"supported by {shown}")
    else:
        parts.append(f"no incident evidence (similarity {candidate.similarity:.2f} only)")
    if candidate.contradicted:
        against = ", ".join(
            f"{h.observed or 'something else'} where {describe(h)} was expected"
            for h in candidate.contradicted[:3]
        )
        parts.append(f"against: {against}")
    for hint in candidate.hints[:1]:
        where = (
            "by the error_code field, which the records contradict"
            if FIELD_CODE in hint.evidence_ids
            else "only in the prose"
        )
        parts.append(f"{hint.signal} named {where} (a hint, not evidence)")
    return "; ".join(parts)


_MISSING_TEXT = {
    SERVICE: "Evidence that {v} is involved (its logs, health checks or metrics)",
    EXCEPTION: "A {v} in the stack trace or logs",
    STATUS: "HTTP {v} responses in the logs or metrics",
    PATH: "Failing requests to {v}",
    FILE: "A stack frame in {v}",
    IDENTIFIER: "A stack frame in {v}",
    PHRASE: 'A log line saying "{v}"',
}


def missing_evidence(candidate: Candidate, limit: int = MAX_MISSING) -> list[str]:
    """The expected signals of ``candidate`` that the incident does not show, as checks."""
    out = [
        _MISSING_TEXT[h.kind].format(v=h.signal)
        for h in candidate.missing
        if h.kind in _MISSING_TEXT
    ]
    return list(dict.fromkeys(out))[:limit]


#: Id prefixes of the incident's own and collected evidence (everything else is knowledge).
INCIDENT_PREFIXES = ("incident:", "prom:", "log:")


def cited_incident_ids(claims: Sequence[Claim]) -> set[str]:
    """Ids of incident or collected evidence the claims cite (knowledge docs left out)."""
    return {c.id for claim in claims for c in claim.evidence if c.id.startswith(INCIDENT_PREFIXES)}
