"""The domain evaluation: does the product name the right error family, and abstain when none fits?

Each case of ``data/eval/incidents.jsonl`` (see ``cases.py``) is run through an analyzer —
``GraphAnalyzer`` in ``product.py`` runs the product's own graph; ``DenseFloorAnalyzer`` here is
the dense-similarity baseline — and scored (``scoring.py``): the top-level figures are the
product's answer, the retrieval-rank figures sit under ``retrieval``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from app.core.config import Settings
from app.evaluation.cases import Analysis, IncidentAnalyzer, IncidentCase
from app.evaluation.scoring import (
    OUTCOMES,
    CaseResult,
    band_by_outcome,
    contradictions,
    retrieval_summary,
    summarise,
)
from app.rag.query import retrieval_query
from app.rag.retrieve import Retriever

DEFAULT_FLOOR = 0.45
DEFAULT_LIMIT = 10
#: The bounds ``unmet_thresholds`` checks: name -> (report key, whether it is an upper bound).
BOUNDS = {
    "min_hit1": ("hit@1", False),
    "min_mrr": ("mrr", False),
    "min_abstain_f1": ("abstain_f1", False),
    "min_log_citation": ("log_citation_rate", False),
    "max_false_confidence": ("false_confidence_rate", True),
}


class DenseFloorAnalyzer:
    """The baseline analyzer: a retriever's ranking, abstaining below a similarity floor."""

    def __init__(
        self,
        retriever: Retriever,
        floor: float = DEFAULT_FLOOR,
        limit: int = DEFAULT_LIMIT,
        query_builder: Callable[[Mapping[str, Any]], str] = retrieval_query,
    ) -> None:
        self.retriever = retriever
        self.floor = floor
        self.limit = limit
        self.query_builder = query_builder

    def __call__(self, incident: Mapping[str, Any]) -> Analysis:
        """Rank error families for the incident; abstain when the best similarity is low."""
        query = self.query_builder(incident)
        if not query.strip():  # only instructions to the model: nothing to search
            return Analysis(
                [], True, {"query": query, "top_similarity": 0.0, "doc_ids": []}, [], True
            )
        retrieval = self.retriever.retrieve(query, self.limit)
        ranked: list[tuple[str, float]] = []
        for doc in retrieval.docs:
            code = str(doc.metadata.get("error_code", ""))
            # Several chunks may share a family; its best-ranked chunk stands for it.
            if code and code not in {c for c, _ in ranked}:
                ranked.append((code, doc.similarity))
        top = retrieval.docs[0].similarity if retrieval.docs else 0.0
        abstained = retrieval.low_confidence or top < self.floor
        rca = {"query": query, "top_similarity": top, "doc_ids": [d.id for d in retrieval.docs]}
        # The baseline's answer is its ranking: it has no RCA of its own.
        return Analysis([c for c, _ in ranked], abstained, rca, ranked, abstained)


@contextmanager
def dense_floor_analyzer(
    settings: Settings, floor: float = DEFAULT_FLOOR, limit: int = DEFAULT_LIMIT
) -> Iterator[DenseFloorAnalyzer]:
    """The baseline analyzer over a private copy of the knowledge base, dropped afterwards.

    Args:
        settings: Chooses the Chroma backend and the knowledge file.
        floor: Abstain when the best dense similarity is below this.
        limit: How many chunks to retrieve per case.

    Yields:
        The analyzer.
    """
    from app.rag.embedding import default_embedder
    from app.rag.knowledge import build_knowledge_base
    from app.rag.retrieve import DenseRetriever

    name = f"eval-{uuid.uuid4().hex[:12]}"
    knowledge = build_knowledge_base(settings, default_embedder(), collection_name=name)
    try:
        yield DenseFloorAnalyzer(DenseRetriever(knowledge.store), floor=floor, limit=limit)
    finally:
        knowledge.store.client.delete_collection(name)


def score_cases(cases: Sequence[IncidentCase], analyzer: IncidentAnalyzer) -> list[CaseResult]:
    """Run the analyzer on every case, in order.

    Args:
        cases: The evaluation cases.
        analyzer: Answers one incident.

    Returns:
        One scored result per case.
    """
    return [CaseResult(case, analyzer(case.incident)) for case in cases]


def incident_report(results: Sequence[CaseResult]) -> dict[str, Any]:
    """The report over scored cases.

    Args:
        results: The output of ``score_cases``.

    Returns:
        The product's figures at the top (``hit@1`` … ``abstain_f1``, ``log_citation_rate``,
        ``stack_citation_rate``), ``counts``, ``retrieval`` (the ranking and gate alone),
        ``band_by_outcome``, ``contradictions``, ``by_category``, every case under ``cases``
        and the wrong ones under ``misses``.
    """
    overall = summarise(results)
    categories = sorted({r.case.category for r in results})
    counts = ("n", "in_domain", "out_of_domain")
    by_category: dict[str, Any] = {}
    for category in categories:
        subset = [r for r in results if r.case.category == category]
        retrieval = retrieval_summary(subset)
        by_category[category] = {
            **summarise(subset),
            "retrieval_hit@1": retrieval["hit@1"],
            "retrieval_mrr": retrieval["mrr"],
        }
    return {
        **{k: v for k, v in overall.items() if k not in (*counts, "false_confident")},
        "counts": {k: overall[k] for k in counts},
        "retrieval": retrieval_summary(results),
        "band_by_outcome": band_by_outcome(results),
        "contradictions": contradictions(results),
        "by_category": by_category,
        "cases": [r.as_dict() for r in results],
        "misses": [r.miss() for r in results if not r.correct],
    }


def evaluate_incidents(cases: Sequence[IncidentCase], analyzer: IncidentAnalyzer) -> dict[str, Any]:
    """Run the analyzer on every case and build the report (see ``incident_report``).

    Args:
        cases: The evaluation cases.
        analyzer: Answers one incident.

    Returns:
        The report.
    """
    return incident_report(score_cases(cases, analyzer))


def unmet_thresholds(report: Mapping[str, Any], **bounds: float | None) -> list[str]:
    """The bounds the report misses; an undefined metric misses any bound.

    Args:
        report: The output of ``evaluate_incidents`` (plus grounding figures).
        **bounds: ``min_hit1``, ``min_mrr``, ``min_abstain_f1``, ``min_log_citation`` (lowest
            acceptable values) and ``max_false_confidence`` (highest); ``None`` skips one.

    Returns:
        One readable line per unmet bound; empty when all hold.

    Raises:
        TypeError: An unknown bound name.
    """
    unknown = set(bounds) - set(BOUNDS)
    if unknown:
        raise TypeError(f"unknown threshold(s): {', '.join(sorted(unknown))}")
    failures: list[str] = []
    for name, (key, upper) in BOUNDS.items():
        bound = bounds.get(name)
        if bound is None:
            continue
        value = report.get(key)
        if value is None or (value > bound if upper else value < bound):
            shown = "undefined" if value is None else f"{value:.3f}"
            failures.append(f"{key} {shown} {'>' if upper else '<'} {bound:.3f}")
    return failures


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.3f}"


#: The per-category table's columns: report key -> header.
CATEGORY_COLUMNS = {
    "hit@1": "hit@1",
    "mrr": "mrr",
    "abstain_precision": "abst P",
    "abstain_recall": "abst R",
    "abstain_f1": "abst F1",
    "log_citation_rate": "log cite",
    "retrieval_hit@1": "ret h@1",
}


def format_report(report: Mapping[str, Any]) -> str:
    """The report as plain-text tables: per category, band per outcome, and every miss.

    Args:
        report: The output of ``evaluate_incidents``.

    Returns:
        Printable text.
    """
    header = f"{'category':<20} {'n':>4} " + " ".join(f"{c:>8}" for c in CATEGORY_COLUMNS.values())
    header += f" {'hi-wrong':>8}"
    lines = [header, "-" * len(header)]
    overall = {
        **report,
        "n": report["counts"]["n"],
        "retrieval_hit@1": report.get("retrieval", {}).get("hit@1"),
        "false_confident": sum(v.get("false_confident", 0) for v in report["by_category"].values()),
    }
    for name, row in [("ALL", overall), *report["by_category"].items()]:
        values = " ".join(f"{_fmt(row.get(c)):>8}" for c in CATEGORY_COLUMNS)
        lines.append(f"{name:<20} {row['n']:>4} {values} {row.get('false_confident', 0):>8}")
    retrieval = report.get("retrieval") or {}
    if retrieval:
        shown = ", ".join(
            f"{k} {_fmt(retrieval.get(k))}" for k in ("hit@1", "hit@3", "mrr", "abstain_f1")
        )
        ignoring = retrieval.get("ignoring_abstain") or {}
        lines.append(f"retrieval alone: {shown}; ungated hit@1 {_fmt(ignoring.get('hit@1'))}")
    bands = report.get("band_by_outcome") or {}
    if bands:
        columns = list(next(iter(bands.values())))
        lines += ["", f"{'band per outcome':<20}" + "".join(f"{b:>13}" for b in columns)]
        for outcome in OUTCOMES:
            row = bands.get(outcome, {})
            lines.append(f"{outcome:<20}" + "".join(f"{row.get(b, 0):>13}" for b in columns))
    flags = report.get("contradictions") or {}
    if flags:
        lines.append(
            f"flags: {flags['flags']} on {flags['cases_flagged']} case(s), "
            f"{flags['first_hypothesis_flagged']} on a first hypothesis; "
            f"contradicted candidates {flags['contradicted_candidates']} "
            f"(diagnosis in {flags['diagnosed_cases']} case(s))"
        )
    misses = report["misses"]
    lines += ["", f"misses: {len(misses)}"]
    for miss in misses:
        top3 = ", ".join(f"{code} {score:.3f}" for code, score in miss["top3"])
        lines.append(
            f"  {miss['id']:<10} {miss['category']:<18} expected={miss['expected']} "
            f"got={miss['got']} band={miss['band']}  retrieval: {top3}"
        )
    return "\n".join(lines)
