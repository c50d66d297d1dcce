"""The domain evaluation: does retrieval find the right error family, and abstain when none fits?

Each case of ``data/eval/incidents.jsonl`` is an incident plus the error code it should match
(``null`` when the right answer is to abstain). An ``IncidentAnalyzer`` turns an incident into
ranked error codes, an abstain decision and an RCA; the default one is the dense baseline with
a similarity floor, and the product's graph can be evaluated by passing its own analyzer.

Scoring: hit@k and MRR are over the in-domain cases, judged by the ``error_code`` of the ranked
families; an in-domain case that abstains is a miss. Abstaining is the positive class of
abstain precision / recall / F1, computed over every case. A metric whose denominator is empty
(say, recall on a category without out-of-domain cases) is reported as ``None``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rag.retrieve import Retriever

DEFAULT_FLOOR = 0.45
DEFAULT_LIMIT = 10
UNCATEGORISED = "uncategorised"
ABSTAINED = "(abstained)"

#: What an analyzer returns: ranked (error code, score) best first, abstained, the RCA.
AnalyzerResult = tuple[Sequence[tuple[str, float]], bool, Mapping[str, Any]]


class Analysis(NamedTuple):
    """An analyzer's answer for one incident."""

    ranked: Sequence[tuple[str, float]]
    abstained: bool
    rca: Mapping[str, Any]


class IncidentAnalyzer(Protocol):
    """Analyses one incident for evaluation (the graph's ``analyze_for_eval`` fits)."""

    def __call__(self, incident: Mapping[str, Any]) -> AnalyzerResult:
        """Ranked error codes with scores, whether it abstains, and the RCA as plain data."""
        ...


@dataclass(frozen=True)
class IncidentCase:
    """One line of the evaluation file."""

    id: str
    incident: dict[str, Any]
    expected_error_code: str | None
    category: str = UNCATEGORISED


def product_query(incident: Mapping[str, Any]) -> str:
    """The retrieval query exactly as the graph's ``rag`` node builds it.

    Args:
        incident: The incident fields.

    Returns:
        The query text.
    """
    from app.graph.nodes.rag import retrieval_query

    return retrieval_query(dict(incident))


def load_cases(path: Path) -> list[IncidentCase]:
    """Read and check the evaluation cases, one JSON object per line.

    Args:
        path: The ``.jsonl`` file.

    Returns:
        The cases in file order.

    Raises:
        ConfigurationError: Naming the line of the first malformed case.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read eval cases {path}: {exc.strerror}") from exc
    cases: list[IncidentCase] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise ConfigurationError(f"{where}: expected a JSON object")
        case_id, incident = row.get("id"), row.get("incident")
        expected, category = row.get("expected_error_code"), row.get("category", UNCATEGORISED)
        if not isinstance(case_id, str) or not case_id:
            raise ConfigurationError(f"{where}: 'id' must be a non-empty string")
        if case_id in seen:
            raise ConfigurationError(f"{where}: duplicate id {case_id!r}")
        if not isinstance(incident, dict) or not str(incident.get("message", "")).strip():
            raise ConfigurationError(f"{where}: 'incident' must be an object with a 'message'")
        if "expected_error_code" not in row or not (expected is None or isinstance(expected, str)):
            raise ConfigurationError(f"{where}: 'expected_error_code' must be a code or null")
        if not isinstance(category, str):
            raise ConfigurationError(f"{where}: 'category' must be a string")
        seen.add(case_id)
        cases.append(IncidentCase(case_id, incident, expected, category or UNCATEGORISED))
    if not cases:
        raise ConfigurationError(f"{path} has no cases")
    return cases


class DenseFloorAnalyzer:
    """The baseline analyzer: a retriever's ranking, abstaining below a similarity floor."""

    def __init__(
        self,
        retriever: Retriever,
        floor: float = DEFAULT_FLOOR,
        limit: int = DEFAULT_LIMIT,
        query_builder: Callable[[Mapping[str, Any]], str] = product_query,
    ) -> None:
        self.retriever = retriever
        self.floor = floor
        self.limit = limit
        self.query_builder = query_builder

    def __call__(self, incident: Mapping[str, Any]) -> Analysis:
        """Rank error families for the incident; abstain when the best similarity is low."""
        query = self.query_builder(incident)
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
        return Analysis(ranked=ranked, abstained=abstained, rca=rca)


@contextmanager
def dense_floor_analyzer(
    settings: Settings, floor: float = DEFAULT_FLOOR, limit: int = DEFAULT_LIMIT
) -> Iterator[DenseFloorAnalyzer]:
    """The default analyzer over a private copy of the knowledge base, dropped afterwards.

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


@dataclass(frozen=True)
class CaseResult:
    """The analyzer's answer to one case, scored."""

    case: IncidentCase
    ranked: list[tuple[str, float]]
    abstained: bool

    @property
    def in_domain(self) -> bool:
        """True when the case has an expected error code."""
        return self.case.expected_error_code is not None

    @property
    def rank(self) -> int | None:
        """1-based rank of the expected code among the ranked codes, if it was ranked at all."""
        codes = [code for code, _ in self.ranked]
        expected = self.case.expected_error_code
        return codes.index(expected) + 1 if expected in codes else None

    def hit(self, k: int) -> bool:
        """In domain, did not abstain, and the expected code is in the top ``k``."""
        rank = self.rank
        return self.in_domain and not self.abstained and rank is not None and rank <= k

    @property
    def reciprocal_rank(self) -> float:
        """``1 / rank`` of the expected code; 0 when missing or abstained."""
        rank = self.rank
        return 1.0 / rank if self.in_domain and not self.abstained and rank else 0.0

    @property
    def correct(self) -> bool:
        """Top-1 hit for an in-domain case; an abstention for an out-of-domain one."""
        return self.hit(1) if self.in_domain else self.abstained

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
            "top": [[code, round(score, 4)] for code, score in self.ranked[:5]],
        }

    def miss(self) -> dict[str, Any]:
        """The row of the misses table: what was expected, what came back, the top three."""
        return {
            "id": self.case.id,
            "category": self.case.category,
            "expected": self.case.expected_error_code,
            "got": self.got,
            "top3": [[code, round(score, 4)] for code, score in self.ranked[:3]],
        }

    @property
    def got(self) -> str | None:
        """The answer as a reader would state it: the top code, or that it abstained."""
        if self.abstained:
            return ABSTAINED
        return self.ranked[0][0] if self.ranked else None


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or None when the denominator is 0 (metric undefined)."""
    return numerator / denominator if denominator else None


def summarise(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Retrieval and abstention metrics over a set of scored cases.

    Args:
        results: Scored cases.

    Returns:
        Counts, ``hit@1/3/5`` and ``mrr`` over the in-domain cases, and abstain
        precision / recall / F1 over all of them (``None`` where undefined).
    """
    inside = [r for r in results if r.in_domain]
    tp = sum(1 for r in results if r.abstained and not r.in_domain)
    fp = sum(1 for r in results if r.abstained and r.in_domain)
    fn = sum(1 for r in results if not r.abstained and not r.in_domain)
    return {
        "n": len(results),
        "in_domain": len(inside),
        "out_of_domain": len(results) - len(inside),
        "hit@1": ratio(sum(r.hit(1) for r in inside), len(inside)),
        "hit@3": ratio(sum(r.hit(3) for r in inside), len(inside)),
        "hit@5": ratio(sum(r.hit(5) for r in inside), len(inside)),
        "mrr": ratio(sum(r.reciprocal_rank for r in inside), len(inside)),
        "abstain_precision": ratio(tp, tp + fp),
        "abstain_recall": ratio(tp, tp + fn),
        "abstain_f1": ratio(2 * tp, 2 * tp + fp + fn),
    }


def ranking_only(results: Sequence[CaseResult]) -> dict[str, float | None]:
    """hit@k and MRR of the ranking alone, as if the analyzer never abstained.

    Separates "the right family was not found" from "it was found but the abstain rule fired".

    Args:
        results: Scored cases.

    Returns:
        ``hit@1``, ``hit@3``, ``hit@5`` and ``mrr`` over the in-domain cases.
    """
    inside = [r for r in results if r.in_domain]
    ranks = [r.rank for r in inside]
    return {
        "hit@1": ratio(sum(1 for x in ranks if x is not None and x <= 1), len(inside)),
        "hit@3": ratio(sum(1 for x in ranks if x is not None and x <= 3), len(inside)),
        "hit@5": ratio(sum(1 for x in ranks if x is not None and x <= 5), len(inside)),
        "mrr": ratio(sum(1.0 / x for x in ranks if x is not None), len(inside)),
    }


def evaluate_incidents(cases: Sequence[IncidentCase], analyzer: IncidentAnalyzer) -> dict[str, Any]:
    """Run the analyzer on every case and build the report.

    Args:
        cases: The evaluation cases.
        analyzer: Produces ranked codes and the abstain decision for an incident.

    Returns:
        The overall metrics (``hit@1`` … ``abstain_f1``), ``counts``, ``by_category``, every
        case under ``cases`` and the wrong ones under ``misses``.
    """
    results: list[CaseResult] = []
    for case in cases:
        ranked, abstained, _ = analyzer(case.incident)
        results.append(CaseResult(case, [(c, float(s)) for c, s in ranked], bool(abstained)))
    overall = summarise(results)
    categories = sorted({r.case.category for r in results})
    return {
        **{k: v for k, v in overall.items() if k not in ("n", "in_domain", "out_of_domain")},
        "counts": {k: overall[k] for k in ("n", "in_domain", "out_of_domain")},
        "ignoring_abstain": ranking_only(results),
        "by_category": {
            c: summarise([r for r in results if r.case.category == c]) for c in categories
        },
        "cases": [r.as_dict() for r in results],
        "misses": [r.miss() for r in results if not r.correct],
    }


def unmet_thresholds(
    report: Mapping[str, Any],
    min_hit1: float | None = None,
    min_mrr: float | None = None,
    min_abstain_f1: float | None = None,
) -> list[str]:
    """The thresholds the report misses; an undefined metric misses any threshold.

    Args:
        report: The output of ``evaluate_incidents``.
        min_hit1: Lowest acceptable hit@1.
        min_mrr: Lowest acceptable MRR.
        min_abstain_f1: Lowest acceptable abstain F1.

    Returns:
        One readable line per unmet threshold; empty when all hold.
    """
    failures: list[str] = []
    for key, minimum in (("hit@1", min_hit1), ("mrr", min_mrr), ("abstain_f1", min_abstain_f1)):
        if minimum is None:
            continue
        value = report.get(key)
        if value is None or value < minimum:
            shown = "undefined" if value is None else f"{value:.3f}"
            failures.append(f"{key} {shown} < {minimum:.3f}")
    return failures


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.3f}"


def format_report(report: Mapping[str, Any]) -> str:
    """The report as plain-text tables: overall, per category, and every miss.

    Args:
        report: The output of ``evaluate_incidents``.

    Returns:
        Printable text.
    """
    columns = {
        "hit@1": "hit@1",
        "hit@3": "hit@3",
        "hit@5": "hit@5",
        "mrr": "mrr",
        "abstain_precision": "abst P",
        "abstain_recall": "abst R",
        "abstain_f1": "abst F1",
    }
    header = f"{'category':<20} {'n':>4} " + " ".join(f"{c:>8}" for c in columns.values())
    lines = [header, "-" * len(header)]
    rows = [("ALL", {**report, "n": report["counts"]["n"]}), *report["by_category"].items()]
    for name, row in rows:
        values = " ".join(f"{_fmt(row[c]):>8}" for c in columns)
        lines.append(f"{name:<20} {row['n']:>4} {values}")
    ignoring = report.get("ignoring_abstain")
    if ignoring:
        shown = ", ".join(f"{k} {_fmt(v)}" for k, v in ignoring.items())
        lines.append(f"ranking alone (abstentions not counted as misses): {shown}")
    misses = report["misses"]
    lines.append("")
    lines.append(f"misses: {len(misses)}")
    for miss in misses:
        top3 = ", ".join(f"{code} {score:.3f}" for code, score in miss["top3"])
        lines.append(
            f"  {miss['id']:<12} {miss['category']:<20} expected={miss['expected']} "
            f"got={miss['got']}  top3: {top3}"
        )
    return "\n".join(lines)
