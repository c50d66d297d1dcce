"""Scoring the product's answer on the domain cases, and retrieval's ranking beside it.

The answer is the RCA's: its first hypothesis's ``error_code`` and its final abstain decision.
hit@k and MRR rank the expected code among the hypotheses' codes over the in-domain cases; a
case that abstains is a miss. Abstaining is the positive class of abstain precision / recall /
F1, over every case. The same figures computed from the retrieved docs' order and the retrieval
gate alone go under ``retrieval``, so "found but not answered" stays visible.

Beyond hit@1:

- ``log_citation_rate``: of the in-domain cases whose decisive evidence is a log line, the share
  answered (not abstained) with a first hypothesis that cites that line; ``stack_citation_rate``
  likewise for a decisive stack-trace line;
- ``band_by_outcome``: how many answers of each outcome carry each confidence band — outcome
  ``correct`` (right family), ``wrong`` (another family, or any answer to an out-of-domain
  case) or ``abstained``;
- ``contradictions``: flags the RCA raised (on the draft or a hypothesis) and diagnosis
  candidates with contradicted signals, when the product records them.

A metric whose denominator is empty is ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.evaluation.cases import Analysis, IncidentCase

ABSTAINED = "(abstained)"
OUTCOMES = ("correct", "wrong", "abstained")
BANDS = ("high", "medium", "low", "insufficient")
UNBANDED = "none"


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or None when the denominator is 0 (metric undefined)."""
    return numerator / denominator if denominator else None


def _rank(codes: Sequence[str], expected: str | None) -> int | None:
    if expected is None or expected not in codes:
        return None
    return list(codes).index(expected) + 1


@dataclass(frozen=True)
class CaseResult:
    """One case and the analyzer's answer to it, scored."""

    case: IncidentCase
    analysis: Analysis

    @property
    def in_domain(self) -> bool:
        """True when the case has an expected error code."""
        return self.case.expected_error_code is not None

    @property
    def abstained(self) -> bool:
        """The product's final abstain decision."""
        return bool(self.analysis.abstained)

    @property
    def rank(self) -> int | None:
        """1-based rank of the expected code among the hypotheses' codes, if there at all."""
        return _rank(self.analysis.answer, self.case.expected_error_code)

    def hit(self, k: int) -> bool:
        """In domain, answered, and the expected code is among the first ``k`` hypotheses."""
        rank = self.rank
        return self.in_domain and not self.abstained and rank is not None and rank <= k

    @property
    def reciprocal_rank(self) -> float:
        """``1 / rank`` of the expected code; 0 when missing or abstained."""
        rank = self.rank
        return 1.0 / rank if self.in_domain and not self.abstained and rank else 0.0

    @property
    def correct(self) -> bool:
        """The right first hypothesis in domain; an abstention out of domain."""
        return self.hit(1) if self.in_domain else self.abstained

    @property
    def got(self) -> str | None:
        """The answer as a reader would state it: the first hypothesis's code, or abstained."""
        if self.abstained:
            return ABSTAINED
        return self.analysis.answer[0] if self.analysis.answer else None

    @property
    def outcome(self) -> str:
        """``correct``, ``wrong`` (another family, or answering out of domain) or ``abstained``."""
        if self.abstained:
            return "abstained"
        return "correct" if self.hit(1) else "wrong"

    @property
    def band(self) -> str:
        """The RCA's confidence band, ``none`` when the analyzer gives none."""
        return str(self.analysis.rca.get("confidence") or UNBANDED)

    @property
    def false_confident(self) -> bool:
        """Banded ``high`` without being a correct answer (wrong family, or abstained)."""
        return self.band == "high" and self.outcome != "correct"

    @property
    def retrieval_rank(self) -> int | None:
        """1-based rank of the expected code among the retrieved families."""
        return _rank([code for code, _ in self.analysis.retrieval], self.case.expected_error_code)

    def first_hypothesis_cites(self, evidence_id: str) -> bool:
        """Whether the first hypothesis's claims cite ``evidence_id`` (after the whitelist)."""
        hypotheses = self.analysis.rca.get("hypotheses") or []
        if not hypotheses:
            return False
        return any(
            citation.get("id") == evidence_id
            for claim in hypotheses[0].get("claims") or []
            for citation in claim.get("evidence") or []
        )

    @property
    def cited_decisive(self) -> bool | None:
        """Answered and citing the decisive evidence; None when the case names none."""
        decisive = self.case.decisive_evidence
        if decisive is None or not self.in_domain:
            return None
        return not self.abstained and self.first_hypothesis_cites(decisive)

    @property
    def flags(self) -> list[Any]:
        """Flags the RCA raised, on the draft itself and on each hypothesis."""
        rca = self.analysis.rca
        found = list(rca.get("flags") or [])
        for hypothesis in rca.get("hypotheses") or []:
            found.extend(hypothesis.get("flags") or [])
        return found

    def as_dict(self) -> dict[str, Any]:
        """Plain form for the JSON report."""
        return {
            "id": self.case.id,
            "category": self.case.category,
            "expected": self.case.expected_error_code,
            "got": self.got,
            "abstained": self.abstained,
            "rank": self.rank,
            "correct": self.correct,
            "outcome": self.outcome,
            "band": self.band,
            "hypotheses": list(self.analysis.answer[:5]),
            "decisive_evidence": self.case.decisive_evidence,
            "cited_decisive": self.cited_decisive,
            "flags": len(self.flags),
            "retrieval": {
                "top": [[code, round(score, 4)] for code, score in self.analysis.retrieval[:5]],
                "rank": self.retrieval_rank,
                "abstained": bool(self.analysis.retrieval_abstained),
            },
        }

    def miss(self) -> dict[str, Any]:
        """The row of the misses table: expected, the answer, its band, what retrieval ranked."""
        return {
            "id": self.case.id,
            "category": self.case.category,
            "expected": self.case.expected_error_code,
            "got": self.got,
            "band": self.band,
            "hypotheses": list(self.analysis.answer[:3]),
            "top3": [[code, round(score, 4)] for code, score in self.analysis.retrieval[:3]],
        }


def _abstain_scores(results: Sequence[CaseResult], abstained: Sequence[bool]) -> dict[str, Any]:
    pairs = list(zip(results, abstained, strict=True))
    tp = sum(1 for r, a in pairs if a and not r.in_domain)
    fp = sum(1 for r, a in pairs if a and r.in_domain)
    fn = sum(1 for r, a in pairs if not a and not r.in_domain)
    return {
        "abstain_precision": ratio(tp, tp + fp),
        "abstain_recall": ratio(tp, tp + fn),
        "abstain_f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


def _citation_rate(results: Sequence[CaseResult], prefix: str) -> float | None:
    judged = [
        r for r in results if r.in_domain and (r.case.decisive_evidence or "").startswith(prefix)
    ]
    return ratio(sum(1 for r in judged if r.cited_decisive), len(judged))


def summarise(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The product's answer scored over a set of cases.

    Args:
        results: Scored cases.

    Returns:
        Counts; ``hit@1/3/5`` and ``mrr`` over the in-domain cases; abstain precision / recall /
        F1 over all; the log- and stack-citation rates; ``false_confident`` (cases banded
        ``high`` that are not a correct answer).
    """
    inside = [r for r in results if r.in_domain]
    return {
        "n": len(results),
        "in_domain": len(inside),
        "out_of_domain": len(results) - len(inside),
        "hit@1": ratio(sum(r.hit(1) for r in inside), len(inside)),
        "hit@3": ratio(sum(r.hit(3) for r in inside), len(inside)),
        "hit@5": ratio(sum(r.hit(5) for r in inside), len(inside)),
        "mrr": ratio(sum(r.reciprocal_rank for r in inside), len(inside)),
        **_abstain_scores(results, [r.abstained for r in results]),
        "log_citation_rate": _citation_rate(results, "incident:log:"),
        "stack_citation_rate": _citation_rate(results, "incident:stack:"),
        "false_confident": sum(1 for r in results if r.false_confident),
    }


def retrieval_summary(results: Sequence[CaseResult]) -> dict[str, Any]:
    """What retrieval alone would have answered: its family ranking and its gate.

    Args:
        results: Scored cases.

    Returns:
        ``hit@1/3/5`` and ``mrr`` of the retrieved families (a gated case is a miss), the gate's
        abstain precision / recall / F1, and ``ignoring_abstain``: the ranking as if nothing
        was gated.
    """
    inside = [r for r in results if r.in_domain]

    def hits(k: int, gated: bool) -> float | None:
        return ratio(
            sum(
                1
                for r in inside
                if (rank := r.retrieval_rank) is not None
                and rank <= k
                and not (gated and r.analysis.retrieval_abstained)
            ),
            len(inside),
        )

    def mrr(gated: bool) -> float | None:
        total = sum(
            1.0 / rank
            for r in inside
            if (rank := r.retrieval_rank) is not None
            and not (gated and r.analysis.retrieval_abstained)
        )
        return ratio(total, len(inside))

    gate = [bool(r.analysis.retrieval_abstained) for r in results]
    return {
        "hit@1": hits(1, True),
        "hit@3": hits(3, True),
        "hit@5": hits(5, True),
        "mrr": mrr(True),
        **_abstain_scores(results, gate),
        "ignoring_abstain": {
            "hit@1": hits(1, False),
            "hit@3": hits(3, False),
            "hit@5": hits(5, False),
            "mrr": mrr(False),
        },
    }


def band_by_outcome(results: Sequence[CaseResult]) -> dict[str, dict[str, int]]:
    """Counts of each confidence band per outcome (``correct`` / ``wrong`` / ``abstained``).

    Args:
        results: Scored cases.

    Returns:
        Outcome -> band -> count, every outcome and band present (``none`` only when some
        analyzer gave no band).
    """
    counts = Counter((r.outcome, r.band) for r in results)
    bands = [*BANDS, *([UNBANDED] if any(b == UNBANDED for _, b in counts) else [])]
    extra = sorted({b for _, b in counts} - set(bands))
    return {o: {b: counts[(o, b)] for b in [*bands, *extra]} for o in OUTCOMES}


def _candidates(diagnosis: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if not diagnosis:
        return []
    candidates = diagnosis.get("candidates") or []
    return [c for c in candidates if isinstance(c, Mapping)]


def contradictions(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Flags raised by the RCA and contradicted diagnosis candidates.

    Args:
        results: Scored cases.

    Returns:
        ``flags`` (all flags), ``cases_flagged``, ``first_hypothesis_flagged``, ``by_kind``
        (a flag's ``kind`` / ``code`` or its text), ``diagnosed_cases`` (cases with a
        diagnosis in the state) and ``contradicted_candidates`` (diagnosis candidates with at
        least one contradicted signal).
    """
    kinds: Counter[str] = Counter()
    first_flagged = 0
    for result in results:
        for flag in result.flags:
            kind = (flag.get("kind") or flag.get("code")) if isinstance(flag, Mapping) else flag
            kinds[str(kind)] += 1
        hypotheses = result.analysis.rca.get("hypotheses") or []
        first_flagged += bool(hypotheses and hypotheses[0].get("flags"))
    return {
        "flags": sum(kinds.values()),
        "cases_flagged": sum(1 for r in results if r.flags),
        "first_hypothesis_flagged": first_flagged,
        "by_kind": dict(sorted(kinds.items())),
        "diagnosed_cases": sum(1 for r in results if r.analysis.diagnosis),
        "contradicted_candidates": sum(
            1
            for r in results
            for candidate in _candidates(r.analysis.diagnosis)
            if candidate.get("contradicted")
        ),
    }
