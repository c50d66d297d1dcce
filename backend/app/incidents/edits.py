"""A reviewer's edited RCA, checked like a draft before it is stored as the final RCA.

The whitelist has already removed citations of evidence the RCA was not given. Here every claim
the reviewer wrote or changed (its text or its citations) is scored by the same
``CitationChecker`` the ``citation_check`` node uses, and so is every new or reworded
hypothesis statement, against the texts its claims cite. Unchanged claims keep the draft's
verdicts. An edit whose changed claims or statements no citation supports is refused with the
list of them, unless the reviewer confirms it (``confirm_unsupported``): then it is stored
with those claims marked unsupported. The reviewer's bands are the reviewer's call and stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.errors import UnsupportedClaims
from app.rca.evidence import collected_items, incident_evidence
from app.rca.grounding import CitationChecker, Support

_RANK = {Support.SUPPORTED.value: 2, Support.WEAK.value: 1, Support.UNSUPPORTED.value: 0}
_BY_RANK = {rank: support for support, rank in _RANK.items()}
#: How much of a failing claim the refusal quotes.
QUOTED_CHARS = 120


@dataclass(frozen=True)
class FailingClaim:
    """An edited claim (or hypothesis statement) that no citation supports."""

    where: str
    text: str
    reason: str

    def describe(self) -> str:
        """One line for the refusal, e.g. ``claim 1.2 “…”: error-doc-… unsupported (0.31)``."""
        text = self.text if len(self.text) <= QUOTED_CHARS else self.text[: QUOTED_CHARS - 1] + "…"
        return f"{self.where} “{text}”: {self.reason}"


def evidence_texts(values: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Every citable text of a run by id, and the knowledge docs' texts alone."""
    docs = {str(d["id"]): str(d["content"]) for d in values.get("similar_error_docs", [])}
    items = incident_evidence(dict(values.get("incident", {}))) + collected_items(
        values.get("collected_evidence", [])
    )
    return {**docs, **{e.id: e.text for e in items}}, docs


def _claim_key(claim: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    return str(claim.get("text", "")), tuple(str(c.get("id")) for c in claim.get("evidence", []))


class EditChecker:
    """Checks an edited RCA against the evidence of one run."""

    def __init__(self, checker: CitationChecker, values: Mapping[str, Any]) -> None:
        """Check against ``values``, the run's graph state (docs, incident, collected items)."""
        self.checker = checker
        self.texts, self.docs = evidence_texts(values)

    def _verdict(self, text: str, cited_id: str) -> dict[str, Any] | None:
        cited = self.texts.get(cited_id)
        if cited is None:
            return None
        alternatives = (
            [t for i, t in self.docs.items() if i != cited_id] if cited_id in self.docs else None
        )
        result = self.checker.check(text, cited, alternatives)
        return {
            "support": result.support.value,
            "score": result.score,
            "sentence": result.sentence,
            "span": list(result.span),
        }

    def check_claim(self, claim: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The claim with fresh verdicts, and why it fails (None when a citation supports it)."""
        evidence = []
        for citation in claim.get("evidence", []):
            verdict = self._verdict(str(claim.get("text", "")), str(citation["id"]))
            evidence.append({**citation, **(verdict or {"support": Support.UNSUPPORTED.value})})
        best = max((_RANK[c["support"]] for c in evidence), default=0)
        checked = {
            **claim,
            "evidence": evidence,
            "supported": best == _RANK[Support.SUPPORTED.value],
            "support": _BY_RANK[best],
        }
        if not evidence:
            return checked, "cites no evidence"
        if best == 0:
            scores = ", ".join(
                f"{c['id']} {c['support']} ({c.get('score', 0):.2f})" for c in evidence
            )
            return checked, f"not supported by its citations ({scores})"
        return checked, None

    def check_statement(self, hypothesis: Mapping[str, Any]) -> str | None:
        """Why a hypothesis statement fails against the texts its claims cite, or None."""
        cited = {str(c["id"]) for claim in hypothesis.get("claims", []) for c in claim["evidence"]}
        if not cited:
            return "its claims cite no evidence"
        statement = str(hypothesis.get("statement", ""))
        verdicts = [v for v in (self._verdict(statement, i) for i in sorted(cited)) if v]
        if any(_RANK[v["support"]] > 0 for v in verdicts):
            return None
        return "the evidence its claims cite does not support it"


def check_edit(
    edited: dict[str, Any],
    original: Mapping[str, Any] | None,
    values: Mapping[str, Any],
    checker: CitationChecker,
    *,
    confirm_unsupported: bool = False,
) -> dict[str, Any]:
    """The edited RCA with verdicts on what the reviewer changed; refused when that fails.

    Args:
        edited: The reviewer's RCA, validated and whitelisted.
        original: The draft it edits.
        values: The run's graph state.
        checker: The citation checker.
        confirm_unsupported: Store failing claims anyway (marked unsupported).

    Returns:
        The RCA to store.

    Raises:
        UnsupportedClaims: Some changed claim or statement is unsupported and not confirmed.
    """
    original = original or {}
    kept_claims = {
        _claim_key(claim)
        for hypothesis in original.get("hypotheses", [])
        for claim in hypothesis.get("claims", [])
    }
    kept_statements = {
        (str(h.get("statement", "")), h.get("error_code")) for h in original.get("hypotheses", [])
    }
    edit = EditChecker(checker, values)
    failing: list[FailingClaim] = []
    hypotheses = []
    for h_index, hypothesis in enumerate(edited.get("hypotheses", []), start=1):
        claims = []
        for c_index, claim in enumerate(hypothesis.get("claims", []), start=1):
            if _claim_key(claim) in kept_claims:
                claims.append(claim)
                continue
            checked, reason = edit.check_claim(claim)
            claims.append(checked)
            if reason:
                failing.append(FailingClaim(f"claim {h_index}.{c_index}", claim["text"], reason))
        hypothesis = {**hypothesis, "claims": claims}
        statement = (str(hypothesis.get("statement", "")), hypothesis.get("error_code"))
        if statement not in kept_statements:
            reason = edit.check_statement(hypothesis)
            if reason:
                failing.append(
                    FailingClaim(f"hypothesis {h_index}", str(hypothesis["statement"]), reason)
                )
        hypotheses.append(hypothesis)
    if failing and not confirm_unsupported:
        raise UnsupportedClaims([f.describe() for f in failing])
    return {**edited, "hypotheses": hypotheses}
