"""Grounding metrics for the domain eval: are citations supported, is confidence honest?

- ``citation_precision``: supported citations ÷ citations that passed the whitelist;
- ``unsupported_claims``: claims left without a supported citation (count; ``…_rate`` too);
- ``whitelist_drops``: cited ids that were never supplied;
- ``false_confidence_rate``: cases banded ``high`` that are not a correct answer (another family
  than expected, any answer to an out-of-domain case, or an abstention) ÷ all cases — target
  ≤ 0.02;
- ``high_band_coverage``: cases whose first hypothesis is right and banded ``high`` ÷ cases whose
  first hypothesis is right — target ≥ 0.5, so "never say high" is no answer;
- ``checker_precision`` / ``checker_recall``: the citation checker's "supported" verdicts on the
  labelled pairs of ``data/eval/claims.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from app.evaluation.cases import IncidentAnalyzer, IncidentCase
from app.evaluation.incidents import incident_report, score_cases
from app.evaluation.scoring import CaseResult, ratio
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


def grounding_metrics(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The grounding metrics over scored cases (see the module docstring)."""
    cited = supported = claims = unsupported_claims = drops = 0
    for result in results:
        rca = result.analysis.rca
        drops += len(rca.get("dropped_evidence_ids", []))
        cited += len(rca.get("unsupported_citations", []))
        for hypothesis in rca.get("hypotheses", []):
            for claim in hypothesis.get("claims", []):
                claims += 1
                kept = claim.get("evidence", [])
                supported += sum(1 for c in kept if c.get("support") == Support.SUPPORTED.value)
                cited += len(kept)
                unsupported_claims += 0 if claim.get("supported") else 1
    correct = [r for r in results if r.in_domain and r.correct]
    return {
        "citation_precision": ratio(supported, cited),
        "citations": cited,
        "unsupported_claims": unsupported_claims,
        "unsupported_claim_rate": ratio(unsupported_claims, claims),
        "whitelist_drops": drops,
        "false_confidence_rate": ratio(sum(r.false_confident for r in results), len(results)),
        "high_band_coverage": ratio(sum(r.band == "high" for r in correct), len(correct)),
    }


def evaluate_with_grounding(
    cases: Sequence[IncidentCase], analyzer: IncidentAnalyzer
) -> dict[str, Any]:
    """The report of ``evaluate_incidents`` plus the grounding metrics."""
    results = score_cases(cases, analyzer)
    return {**incident_report(results), **grounding_metrics(results)}
