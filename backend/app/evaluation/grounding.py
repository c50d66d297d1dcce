"""Grounding metrics for the domain eval: are citations supported, is confidence honest?

- ``citation_precision``: supported citations ÷ citations that passed the whitelist;
- ``unsupported_claims``: claims left without a supported citation (count; ``…_rate`` too);
- ``whitelist_drops``: cited ids that were never supplied;
- ``false_confidence_rate``: in-domain cases banded ``high`` whose top family is wrong (or that
  abstained) ÷ in-domain cases — target ≤ 0.05;
- ``high_band_coverage``: correct top-1 cases banded ``high`` ÷ correct top-1 cases — target
  ≥ 0.5, so "never say high" is no answer;
- ``checker_precision`` / ``checker_recall``: the citation checker's "supported" verdicts on the
  labelled pairs of ``data/eval/claims.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.evaluation.incidents import (
    Analysis,
    IncidentAnalyzer,
    IncidentCase,
    evaluate_incidents,
    ratio,
)
from app.rca.grounding import CitationChecker, Support


def checker_scores(
    checker: CitationChecker, docs_by_code: Mapping[str, str], pairs_path: Path
) -> dict[str, Any]:
    """Precision and recall of "supported" verdicts on labelled (claim, doc) pairs."""
    rows = [json.loads(line) for line in pairs_path.read_text().splitlines() if line.strip()]
    tp = fp = fn = tn = 0
    for row in rows:
        others = [text for code, text in docs_by_code.items() if code != row["doc_code"]]
        verdict = checker.check(row["claim"], docs_by_code[row["doc_code"]], others).support
        predicted, actual = verdict is Support.SUPPORTED, bool(row["supported"])
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not predicted and not actual
    return {
        "checker_precision": ratio(tp, tp + fp),
        "checker_recall": ratio(tp, tp + fn),
        "checker_pairs": len(rows),
        "checker_confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    }


def grounding_metrics(results: Sequence[tuple[IncidentCase, Analysis]]) -> dict[str, Any]:
    """The grounding metrics over analysed cases (see the module docstring)."""
    cited = supported = claims = unsupported_claims = drops = 0
    in_domain = high_wrong = correct = correct_high = 0
    for case, analysis in results:
        rca = analysis.rca
        drops += len(rca.get("dropped_evidence_ids", []))
        removed = len(rca.get("unsupported_citations", []))
        for hypothesis in rca.get("hypotheses", []):
            for claim in hypothesis.get("claims", []):
                claims += 1
                kept = claim.get("evidence", [])
                supported += sum(1 for c in kept if c.get("support") == Support.SUPPORTED.value)
                cited += len(kept)
                unsupported_claims += 0 if claim.get("supported") else 1
        cited += removed
        if case.expected_error_code is None:
            continue
        in_domain += 1
        high = rca.get("confidence") == "high"
        top = analysis.ranked[0][0] if analysis.ranked else None
        right = not analysis.abstained and top == case.expected_error_code
        high_wrong += high and not right
        correct += right
        correct_high += right and high
    return {
        "citation_precision": ratio(supported, cited),
        "citations": cited,
        "unsupported_claims": unsupported_claims,
        "unsupported_claim_rate": ratio(unsupported_claims, claims),
        "whitelist_drops": drops,
        "false_confidence_rate": ratio(high_wrong, in_domain),
        "high_band_coverage": ratio(correct_high, correct),
    }


def evaluate_with_grounding(
    cases: Sequence[IncidentCase], analyzer: IncidentAnalyzer
) -> dict[str, Any]:
    """The retrieval report of ``evaluate_incidents`` plus the grounding metrics."""
    analysed: dict[str, Analysis] = {}

    def remembering(incident: Mapping[str, Any]) -> Analysis:
        ranked, abstained, rca = analyzer(incident)
        result = Analysis(ranked, abstained, rca)
        analysed[json.dumps(incident, sort_keys=True)] = result
        return result

    report = evaluate_incidents(cases, remembering)
    pairs = [(c, analysed[json.dumps(c.incident, sort_keys=True)]) for c in cases]
    report.update(grounding_metrics(pairs))
    return report
