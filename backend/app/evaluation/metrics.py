"""Ranking metrics over one ranked list of doc ids and that query's relevance judgements.

Conventions follow ``trec_eval`` / ``pytrec_eval`` as BEIR uses them: a doc is relevant when its
grade is above zero, nDCG uses the grade itself as the gain (``grade / log2(rank + 1)``), and a
query without any relevant doc scores 0 on every metric (BEIR drops such queries before
averaging; so does the harness). Rankings are lists of unique ids, best first; repeated ids after
the first occurrence are ignored so a sloppy ranker cannot collect the same gain twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

#: Relevance judgements of one query: doc id -> grade (0 = judged not relevant).
Qrels = Mapping[str, int]


def _unique(ranking: Sequence[str], k: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for doc_id in ranking:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
            if len(out) == k:
                break
    return out


def ranking_from_scores(scores: Mapping[str, float]) -> list[str]:
    """Doc ids by descending score; equal scores are ordered by id so results are reproducible.

    Args:
        scores: Doc id to score.

    Returns:
        The ids, best first.
    """
    return [doc_id for doc_id, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def dcg_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """Discounted cumulative gain of the first ``k`` results (gain = grade, 1-based ranks).

    Args:
        ranking: Doc ids, best first.
        qrels: Graded judgements of the query.
        k: Cut-off.

    Returns:
        ``sum(grade / log2(rank + 1))`` over the top ``k``.
    """
    return sum(
        max(qrels.get(doc_id, 0), 0) / math.log2(rank + 1)
        for rank, doc_id in enumerate(_unique(ranking, k), start=1)
    )


def ndcg_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """DCG@k divided by the DCG@k of the ideal ordering of the judged docs.

    Args:
        ranking: Doc ids, best first.
        qrels: Graded judgements of the query.
        k: Cut-off.

    Returns:
        A value in [0, 1]; 0 when the query has no relevant doc.
    """
    ideal_grades = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    ideal = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal_grades, start=1))
    if ideal == 0:
        return 0.0
    return dcg_at_k(ranking, qrels, k) / ideal


def mrr_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """Reciprocal rank of the first relevant doc within the top ``k`` (0 when none).

    Args:
        ranking: Doc ids, best first.
        qrels: Graded judgements of the query.
        k: Cut-off.

    Returns:
        ``1 / rank`` of the first relevant doc, or 0.
    """
    for rank, doc_id in enumerate(_unique(ranking, k), start=1):
        if qrels.get(doc_id, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """Share of the query's relevant docs found in the top ``k``.

    Args:
        ranking: Doc ids, best first.
        qrels: Graded judgements of the query.
        k: Cut-off.

    Returns:
        A value in [0, 1]; 0 when the query has no relevant doc.
    """
    relevant = {doc_id for doc_id, grade in qrels.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_unique(ranking, k))) / len(relevant)


def hit_at_k(ranking: Sequence[str], qrels: Qrels, k: int) -> float:
    """1.0 when any relevant doc is in the top ``k``, else 0.0.

    Args:
        ranking: Doc ids, best first.
        qrels: Graded judgements of the query.
        k: Cut-off.

    Returns:
        1.0 or 0.0.
    """
    return 1.0 if any(qrels.get(d, 0) > 0 for d in _unique(ranking, k)) else 0.0


#: The metrics ``rca eval beir`` reports, by name.
STANDARD_METRICS: dict[str, Callable[[Sequence[str], Qrels], float]] = {
    "ndcg@10": lambda r, q: ndcg_at_k(r, q, 10),
    "mrr@10": lambda r, q: mrr_at_k(r, q, 10),
    "recall@100": lambda r, q: recall_at_k(r, q, 100),
    "hit@1": lambda r, q: hit_at_k(r, q, 1),
    "hit@5": lambda r, q: hit_at_k(r, q, 5),
}


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; 0.0 for no values.

    Args:
        values: The numbers to average.

    Returns:
        Their mean.
    """
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def evaluate_rankings(
    rankings: Mapping[str, Sequence[str]], qrels: Mapping[str, Qrels]
) -> dict[str, float]:
    """Mean of every standard metric over the queries that have at least one relevant doc.

    Args:
        rankings: Query id to its ranking (a missing query counts as an empty ranking).
        qrels: Query id to its judgements.

    Returns:
        Metric name to its mean over the judged queries.
    """
    judged = [qid for qid, judgements in qrels.items() if any(g > 0 for g in judgements.values())]
    return {
        name: mean(metric(rankings.get(qid, []), qrels[qid]) for qid in judged)
        for name, metric in STANDARD_METRICS.items()
    }
