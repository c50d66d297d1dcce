"""``rca eval``: the domain incident evaluation and BEIR retrieval evaluations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.core.config import PROJECT_ROOT, Settings, get_settings
from app.core.reports import write_json_report

METRIC_COLUMNS = ("ndcg@10", "mrr@10", "recall@100", "hit@1", "hit@5")


def cmd_eval_incidents(args: argparse.Namespace) -> int:
    """Evaluate the product (or the dense baseline) on the incident cases.

    Exits 1 when a threshold is missed.
    """
    from app.evaluation.cases import load_cases
    from app.evaluation.grounding import checker_scores, evaluate_with_grounding
    from app.evaluation.incidents import (
        dense_floor_analyzer,
        evaluate_incidents,
        format_report,
        unmet_thresholds,
    )

    cases = load_cases(Path(args.file))
    settings = get_settings()
    if args.analyzer == "dense":
        with dense_floor_analyzer(settings, floor=args.floor) as analyzer:
            report = evaluate_incidents(cases, analyzer)
        report["analyzer"] = {"name": "dense+floor", "floor": args.floor}
    else:
        from app.core.config import PROJECT_ROOT
        from app.evaluation.product import graph_analyzer
        from app.rag.embedding import default_embedder
        from app.rca.grounding import CitationChecker

        with graph_analyzer(settings, parse_evidence=not args.no_parser) as product:
            report = evaluate_with_grounding(cases, product)
            docs = {str(c.metadata["error_code"]): c.text for c in product.knowledge.documents()}
            seconds = product.seconds
        pairs = Path(args.claims) if args.claims else PROJECT_ROOT / "data/eval/claims.jsonl"
        report.update(checker_scores(CitationChecker(default_embedder()), docs, pairs))
        report["analyzer"] = {
            "name": "product graph (hybrid + gates + configured RCA + citation check)",
            "llm": settings.llm,
            "parser": not args.no_parser,
            "score_floor": settings.score_floor,
            "lead_floor": settings.lead_floor,
            "lead_margin": settings.lead_margin,
            "mean_seconds_per_incident": round(sum(seconds) / len(seconds), 4),
        }
    print(format_report(report))
    grounding = [
        "log_citation_rate",
        "stack_citation_rate",
        "citation_precision",
        "unsupported_claims",
        "whitelist_drops",
        "false_confidence_rate",
        "high_band_coverage",
        "checker_precision",
        "checker_recall",
    ]
    for key in grounding:
        if key in report:
            value = report[key]
            print(f"{key:<24}{value:.3f}" if isinstance(value, float) else f"{key:<24}{value}")
    write_json_report(args.json, report)
    failures = unmet_thresholds(
        report,
        min_hit1=args.min_hit1,
        min_mrr=args.min_mrr,
        min_abstain_f1=args.min_abstain_f1,
        min_log_citation=args.min_log_citation,
        max_false_confidence=args.max_false_confidence,
    )
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


def format_beir(result: dict[str, Any]) -> str:
    """The BEIR result as a plain-text table, one row per mode.

    Args:
        result: The output of ``evaluate_beir``.

    Returns:
        Printable text.
    """
    title = (
        f"{result['dataset']} / {result['split']}: {result['queries']} queries, "
        f"{result['docs']} of {result['corpus_docs']} docs"
    )
    width = max([14, *(len(m) + 2 for m in result["modes"])])
    header = f"{'mode':<{width}}" + "".join(f"{c:>12}" for c in METRIC_COLUMNS)
    header += f"{'<10 docs':>10}{'index s':>10}{'query s':>10}"
    lines = [title, header, "-" * len(header)]
    for mode, metrics in result["modes"].items():
        row = f"{mode:<{width}}" + "".join(f"{metrics[c]:>12.4f}" for c in METRIC_COLUMNS)
        lines.append(
            row + f"{metrics['short@10']:>10}{metrics['build_s']:>10.1f}{metrics['query_s']:>10.1f}"
        )
    return "\n".join(lines)


def cmd_eval_beir(args: argparse.Namespace) -> int:
    """Evaluate the product's retrieval engine (shipped and named variants) on a BEIR split."""
    from app.evaluation.beir import evaluate_beir, load_beir
    from app.evaluation.configurations import DEFAULT_MODES, parse_mode
    from app.evaluation.embedding_cache import CachedEmbedder
    from app.rag.embedding import default_embedder

    settings = get_settings()
    names = DEFAULT_MODES if args.modes is None else args.modes.split(",")
    modes = [parse_mode(m.strip(), settings) for m in names if m.strip()]
    dataset = load_beir(Path(args.dir), args.split, limit=args.limit, max_corpus=args.max_corpus)
    cache_dir = None if args.no_cache else Path(args.cache_dir or _default_cache_dir(settings))
    embedder = CachedEmbedder(default_embedder(), cache_dir)
    try:
        result = evaluate_beir(dataset, modes, embedder)
    finally:
        embedder.close()
    result["embedded_texts"] = embedder.computed
    print(format_beir(result))
    write_json_report(args.json, result)
    return 0


def _default_cache_dir(settings: Settings) -> Path:
    return settings.state_dir / "cache" / "embeddings"


def cmd_eval_investigation(args: argparse.Namespace) -> int:
    """Score the investigation scenarios with and without collection (real Prometheus)."""
    from app.evaluation.investigation import (
        format_investigation,
        load_scenarios,
        run_investigation,
    )

    report = run_investigation(load_scenarios(Path(args.dir)), get_settings())
    print(format_investigation(report))
    write_json_report(args.json, report)
    return 0


def add_eval_parser(subparsers: Any) -> None:
    """Register ``rca eval incidents``, ``rca eval investigation`` and ``rca eval beir``.

    Args:
        subparsers: The object returned by ``ArgumentParser.add_subparsers``.
    """
    from app.evaluation.configurations import DEFAULT_MODES, PRESETS
    from app.evaluation.incidents import DEFAULT_FLOOR

    evaluate = subparsers.add_parser("eval", help="offline evaluations (incidents, BEIR sets)")
    kinds = evaluate.add_subparsers(dest="eval_command", required=True)

    incidents = kinds.add_parser(
        "incidents", help="the product's answer and abstention on incident cases"
    )
    incidents.add_argument("file", help="cases, one JSON object per line")
    incidents.add_argument("--json", metavar="OUT", help="also write the full report here")
    incidents.add_argument(
        "--floor",
        type=float,
        default=DEFAULT_FLOOR,
        help=f"abstain below this top similarity (default {DEFAULT_FLOOR})",
    )
    incidents.add_argument(
        "--analyzer",
        choices=("product", "dense"),
        default="product",
        help="the product graph (default) or the dense+floor baseline",
    )
    incidents.add_argument(
        "--no-parser", action="store_true", help="leave the evidence parser out of the query"
    )
    incidents.add_argument("--claims", help="labelled claim pairs (default data/eval/claims.jsonl)")
    incidents.add_argument("--min-hit1", type=float, metavar="X", help="exit 1 when hit@1 < X")
    incidents.add_argument("--min-mrr", type=float, metavar="X", help="exit 1 when MRR < X")
    incidents.add_argument(
        "--min-abstain-f1", type=float, metavar="X", help="exit 1 when abstain F1 < X"
    )
    incidents.add_argument(
        "--min-log-citation", type=float, metavar="X", help="exit 1 when log-citation rate < X"
    )
    incidents.add_argument(
        "--max-false-confidence",
        type=float,
        metavar="X",
        help="exit 1 when the false-confidence rate > X",
    )
    incidents.set_defaults(handler=cmd_eval_incidents)

    investigation = kinds.add_parser(
        "investigation", help="ambiguous alerts scored with and without collected evidence"
    )
    investigation.add_argument(
        "dir",
        nargs="?",
        default=str(PROJECT_ROOT / "data/eval/investigation"),
        help="the scenario folders (default data/eval/investigation)",
    )
    investigation.add_argument("--json", metavar="OUT", help="also write the full report here")
    investigation.set_defaults(handler=cmd_eval_investigation)

    beir = kinds.add_parser("beir", help="nDCG@10, MRR@10, recall@100, hit@k on a BEIR folder")
    beir.add_argument("dir", help="folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    beir.add_argument("--split", default="test", help="qrels split (default test)")
    beir.add_argument("--limit", type=int, metavar="N", help="only the first N judged queries")
    beir.add_argument(
        "--modes",
        help=(
            "comma-separated engine configurations: a preset among "
            f"{', '.join(PRESETS)}, optionally with :key=value overrides "
            f"(e.g. shipped:fusion=zscore:dense_weight=0.7); default {','.join(DEFAULT_MODES)}"
        ),
    )
    beir.add_argument(
        "--max-corpus",
        type=int,
        metavar="N",
        help="judged docs of the evaluated queries plus the first N others",
    )
    beir.add_argument("--json", metavar="OUT", help="also write the result here")
    beir.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="embedding cache keyed by model and text (default <RCA_STATE_DIR>/cache/embeddings)",
    )
    beir.add_argument("--no-cache", action="store_true", help="keep embeddings in memory only")
    beir.set_defaults(handler=cmd_eval_beir)
