"""Which evidence ids an RCA may cite, and an RCA reduced to those ids.

Used by the ``whitelist`` node on every draft and by the incident service on a reviewer's
edit, so one rule decides what counts as supplied evidence wherever an RCA is stored. The node
also holds a generator's free text to the evidence (``scrub_free_text``): an id or error code
the text names that was not supplied is cut out of it and listed with the dropped ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS, compile_code_patterns
from app.rca.evidence import incident_evidence
from app.rca.grounding import rests_on_reporter

#: The evidence-id forms a text can name: knowledge docs, the incident's own pieces, collected
#: metric series and log records (see ``app.rca.evidence``).
EVIDENCE_ID_RE = re.compile(
    r"\berror-doc-[0-9a-f]+\b"
    r"|\bincident:[a-z_]+(?::\d+)?"
    r"|\bprom:[0-9a-f]+\b"
    r"|\blog:[\w./-]+:\d+\b"
)
#: The free-text fields of an RCA; ``ruled_out`` names other families on purpose.
_TEXT_LISTS = ("remediation", "next_checks", "missing_evidence")
_SPACES_RE = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([.,;:!?)\]])")
_EMPTY_BRACKETS_RE = re.compile(r"\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]")
_DANGLING_RE = re.compile(r"(?:,\s*)+(?=[.;)\]]|$)")


def allowed_evidence_ids(
    docs: Iterable[Mapping[str, Any]],
    incident: Mapping[str, Any],
    collected: Iterable[Mapping[str, Any]] = (),
) -> set[str]:
    """Ids of the docs supplied to the RCA, the incident's own and the collected evidence ids.

    Args:
        docs: The retrieved docs the RCA saw (each with an ``id``).
        incident: The incident the RCA is about.
        collected: The items the ``collect`` node gathered for it (each with an ``id``).

    Returns:
        Every id a citation may name.
    """
    doc_ids = {str(d["id"]) for d in docs} | {str(c["id"]) for c in collected}
    return doc_ids | {e.id for e in incident_evidence(dict(incident))}


def filter_rca(rca: dict[str, Any], allowed: set[str]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``rca`` citing only allowed ids, and the dropped ids in order.

    Args:
        rca: The RCA document.
        allowed: The ids it may cite.

    Returns:
        The filtered RCA (claims left without evidence marked unsupported) and the dropped ids.
    """
    dropped: dict[str, None] = {}
    hypotheses = []
    for hypothesis in rca.get("hypotheses", []):
        claims = []
        for claim in hypothesis.get("claims", []):
            kept = [c for c in claim.get("evidence", []) if c.get("id") in allowed]
            for citation in claim.get("evidence", []):
                if citation.get("id") not in allowed:
                    dropped.setdefault(str(citation.get("id")), None)
            supported = bool(kept) and not rests_on_reporter(
                str(claim.get("text", "")), [str(c.get("id")) for c in kept]
            )
            claims.append({**claim, "evidence": kept, "supported": supported})
        hypotheses.append({**hypothesis, "claims": claims})
    return {**rca, "hypotheses": hypotheses}, list(dropped)


def allowed_error_codes(
    docs: Iterable[Mapping[str, Any]],
    incident: Mapping[str, Any],
    patterns: tuple[str, ...] = DEFAULT_ERROR_CODE_PATTERNS,
) -> set[str]:
    """The error codes a generator's text may name: those of the supplied docs and the incident's.

    A doc's family code (``metadata.error_code``) and the codes its text mentions count; of the
    incident only the structured ``error_code`` does: its free text is the reporter's (or an
    attacker's) words, so a code that appears only there is not evidence.

    Args:
        docs: The retrieved docs the RCA saw.
        incident: The incident the RCA is about.
        patterns: Error-code regular expressions.

    Returns:
        The codes, as written.
    """
    codes = {str(incident.get("error_code") or "").strip()} - {""}
    for doc in docs:
        family = (doc.get("metadata") or {}).get("error_code")
        if family:
            codes.add(str(family))
        for pattern in compile_code_patterns(patterns):
            codes.update(m.group(0) for m in pattern.finditer(str(doc.get("content") or "")))
    return codes


def _scrub(
    text: str, allowed: set[str], codes: set[str], patterns: tuple[str, ...], dropped: list[str]
) -> str:
    """``text`` without the ids and codes it names that are not allowed (each added to dropped)."""
    spans: list[tuple[int, int, str]] = [
        (m.start(), m.end(), m.group(0))
        for m in EVIDENCE_ID_RE.finditer(text)
        if m.group(0) not in allowed
    ]
    for pattern in compile_code_patterns(patterns):
        spans.extend(
            (m.start(), m.end(), m.group(0))
            for m in pattern.finditer(text)
            if m.group(0) not in codes and m.group(0) not in allowed
        )
    if not spans:
        return text
    out, position = [], 0
    for start, end, token in sorted(spans):
        if start < position:
            continue
        out.append(text[position:start])
        position = end
        if token not in dropped:
            dropped.append(token)
    out.append(text[position:])
    cleaned = _EMPTY_BRACKETS_RE.sub("", "".join(out))
    cleaned = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", _SPACES_RE.sub(" ", cleaned))
    return _DANGLING_RE.sub("", cleaned).strip()


def scrub_free_text(
    rca: dict[str, Any],
    allowed: set[str],
    codes: set[str],
    patterns: tuple[str, ...] = DEFAULT_ERROR_CODE_PATTERNS,
) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``rca`` whose free text names only supplied ids and codes, and what was cut.

    The summary, each hypothesis statement and claim text, and the remediation, next-check and
    missing-evidence lists are scanned for the evidence-id forms (``EVIDENCE_ID_RE``) and for
    error codes; one that is neither an allowed id nor an allowed code is removed from the text.

    Args:
        rca: The RCA document.
        allowed: The evidence ids it may name (``allowed_evidence_ids``).
        codes: The error codes it may name (``allowed_error_codes``).
        patterns: Error-code regular expressions.

    Returns:
        The scrubbed RCA and the removed ids and codes, in order of first appearance.
    """
    dropped: list[str] = []

    def scrub(text: Any) -> Any:
        return _scrub(text, allowed, codes, patterns, dropped) if isinstance(text, str) else text

    out = {**rca}
    if "summary" in rca:
        out["summary"] = scrub(rca["summary"])
    hypotheses = []
    for hypothesis in rca.get("hypotheses", []):
        scrubbed = {**hypothesis}
        if "statement" in hypothesis:
            scrubbed["statement"] = scrub(hypothesis["statement"])
        if "claims" in hypothesis:
            scrubbed["claims"] = [
                {**claim, "text": scrub(claim["text"])} if "text" in claim else claim
                for claim in hypothesis["claims"]
            ]
        hypotheses.append(scrubbed)
    if "hypotheses" in rca:
        out["hypotheses"] = hypotheses
    for name in _TEXT_LISTS:
        if name in rca:
            out[name] = [scrub(item) for item in rca[name]]
    return out, dropped
