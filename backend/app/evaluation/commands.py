"""``rca eval``: the domain incident evaluation and BEIR retrieval evaluations."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.core.config import Settings, get_settings
from app.core.reports import write_json_report

METRIC_COLUMNS = ("ndcg@10", "mrr@10", "recall@100", "hit@1", "hit@5")


def cmd_eval_incidents(args: argparse.Namespace) -> int:
    """Evaluate the product (or the dense baseline) on the incident cases.

    Exits 1 when a threshold is missed.
    """
    from app.evaluation.grounding import checker_scores, evaluate_with_grounding
    from app.evaluation.incidents import (
        dense_floor_analyzer,
        evaluate_incidents,
        format_report,
        load_cases,
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
            docs = {
                str(c.metadata["error_code"]): c.text for c in product.knowledge.store.all_chunks()
            }
            seconds = product.seconds
        pairs = Path(args.claims) if args.claims else PROJECT_ROOT / "data/eval/claims.jsonl"
        report.update(checker_scores(CitationChecker(default_embedder()), docs, pairs))
        report["analyzer"] = {
            "name": "product graph (hybrid + gates + extractive RCA + citation check)",
            "parser": not args.no_parser,
            "score_floor": settings.score_floor,
            "mean_seconds_per_incident": round(sum(seconds) / len(seconds), 4),
        }
    print(format_report(report))
    grounding = [
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
    failures = unmet_thresholds(report, args.min_hit1, args.min_mrr, args.min_abstain_f1)
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
    header = f"{'mode':<14}" + "".join(f"{c:>12}" for c in METRIC_COLUMNS) + f"{'index s':>10}"
    header += f"{'query s':>10}"
    lines = [title, header, "-" * len(header)]
    for mode, metrics in result["modes"].items():
        row = f"{mode:<14}" + "".join(f"{metrics[c]:>12.4f}" for c in METRIC_COLUMNS)
        lines.append(row + f"{metrics['build_s']:>10.1f}{metrics['query_s']:>10.1f}")
    return "\n".join(lines)


#: What ``rca eval beir`` compares when ``--modes`` is not given.
DEFAULT_BEIR_MODES = ("dense", "bm25", "hybrid")


def cmd_eval_beir(args: argparse.Namespace) -> int:
    """Evaluate retrieval modes on one split of a BEIR folder."""
    from app.evaluation.beir import evaluate_beir, load_beir
    from app.evaluation.modes import ModeOptions
    from app.rag.embedding import default_embedder
    from app.rag.rerank import build_reranker

    settings = get_settings()
    options = ModeOptions(
        rrf_k=args.rrf_k,
        window_tokens=args.window_tokens,
        window_stride=args.window_stride,
        blend_weight=args.blend_weight,
        rerank_depth=settings.rerank_max_docs,
    )
    dataset = load_beir(Path(args.dir), args.split, limit=args.limit, max_corpus=args.max_corpus)
    cache_dir = None if args.no_cache else Path(args.cache_dir or _default_cache_dir(settings))
    # Built after loading, so a bad dataset folder leaves no reranker connection open.
    reranker = build_reranker(settings)
    if args.modes is None:
        # The reranked mode joins the default comparison whenever a reranker is configured.
        modes = [*DEFAULT_BEIR_MODES, *(["hybrid+rerank"] if reranker else [])]
    else:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    try:
        result = evaluate_beir(dataset, modes, default_embedder, cache_dir, options, reranker)
    finally:
        if reranker is not None:
            reranker.close()
    result["options"] = asdict(options)
    print(format_beir(result))
    write_json_report(args.json, result)
    return 0


def _default_cache_dir(settings: Settings) -> Path:
    return settings.state_dir / "cache" / "embeddings"


def add_eval_parser(subparsers: Any) -> None:
    """Register ``rca eval incidents`` and ``rca eval beir``.

    Args:
        subparsers: The object returned by ``ArgumentParser.add_subparsers``.
    """
    from app.evaluation.incidents import DEFAULT_FLOOR
    from app.evaluation.modes import (
        DEFAULT_BLEND_WEIGHT,
        DEFAULT_RRF_K,
        DEFAULT_WINDOW_STRIDE,
        DEFAULT_WINDOW_TOKENS,
        MODES,
    )

    evaluate = subparsers.add_parser("eval", help="offline evaluations (incidents, BEIR sets)")
    kinds = evaluate.add_subparsers(dest="eval_command", required=True)

    incidents = kinds.add_parser("incidents", help="retrieval and abstention on incident cases")
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
    incidents.set_defaults(handler=cmd_eval_incidents)

    beir = kinds.add_parser("beir", help="nDCG@10, MRR@10, recall@100, hit@k on a BEIR folder")
    beir.add_argument("dir", help="folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    beir.add_argument("--split", default="test", help="qrels split (default test)")
    beir.add_argument("--limit", type=int, metavar="N", help="only the first N judged queries")
    beir.add_argument(
        "--modes",
        help=f"comma-separated modes among {', '.join(MODES)} (default "
        f"{','.join(DEFAULT_BEIR_MODES)}, plus hybrid+rerank when RCA_RERANK_URL is set)",
    )
    beir.add_argument(
        "--max-corpus",
        type=int,
        metavar="N",
        help="judged docs of the evaluated queries plus the first N others",
    )
    beir.add_argument(
        "--rrf-k",
        type=int,
        default=DEFAULT_RRF_K,
        help=f"RRF constant of hybrid (default {DEFAULT_RRF_K})",
    )
    beir.add_argument(
        "--window-tokens",
        type=int,
        metavar="N",
        default=DEFAULT_WINDOW_TOKENS,
        help=f"model tokens per dense-window window (default {DEFAULT_WINDOW_TOKENS})",
    )
    beir.add_argument(
        "--window-stride",
        type=int,
        metavar="N",
        default=DEFAULT_WINDOW_STRIDE,
        help=f"tokens between dense-window window starts (default {DEFAULT_WINDOW_STRIDE})",
    )
    beir.add_argument(
        "--blend-weight",
        type=float,
        metavar="W",
        default=DEFAULT_BLEND_WEIGHT,
        help=(
            "weight of bm25-tuned in blend; dense-window gets 1 - W "
            f"(default {DEFAULT_BLEND_WEIGHT})"
        ),
    )
    beir.add_argument("--json", metavar="OUT", help="also write the result here")
    beir.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="doc-embedding cache (default <RCA_STATE_DIR>/cache/embeddings)",
    )
    beir.add_argument("--no-cache", action="store_true", help="always re-embed the corpus")
    beir.set_defaults(handler=cmd_eval_beir)
