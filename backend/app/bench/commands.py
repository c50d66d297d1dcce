"""``rca bench``: one subcommand per benchmark; each module adds its own parser here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.bench.common import DEFAULT_MODELS_DIR, DEFAULT_SCIFACT_DIR
from app.bench.http import add_http_parser
from app.core.reports import write_json_report


def cmd_bench_embed(args: argparse.Namespace) -> int:
    """Run the embedding benchmark, print the tables, optionally write JSON."""
    from app.bench.embed import format_embed_bench, run_embed_bench

    result = run_embed_bench(
        runs=args.runs,
        kb_docs=args.kb_docs,
        scifact_count=args.scifact_docs,
        models_dir=Path(args.models_dir),
        scifact_dir=Path(args.scifact),
        warmup=args.warmup,
    )
    print(format_embed_bench(result))
    write_json_report(args.json, result)
    return 0


def _add_embed(kinds: Any) -> None:
    embed = kinds.add_parser("embed", help="our embedder vs a bare ONNX session vs Chroma's stock")
    embed.add_argument("--runs", type=int, default=100, help="timed calls per query embedder")
    embed.add_argument("--warmup", type=int, default=3, help="untimed calls before each timing")
    embed.add_argument("--kb-docs", type=int, default=512, help="knowledge-base docs (repeated)")
    embed.add_argument("--scifact-docs", type=int, default=1000, help="SciFact docs (0 skips)")
    embed.add_argument(
        "--models-dir",
        default=str(DEFAULT_MODELS_DIR),
        help="tokenizer side files for Chroma's stock function",
    )
    embed.add_argument("--scifact", default=str(DEFAULT_SCIFACT_DIR), help="BEIR SciFact folder")
    embed.add_argument("--json", metavar="OUT", help="also write every number here")
    embed.set_defaults(handler=cmd_bench_embed)


def cmd_bench_retrieve(args: argparse.Namespace) -> int:
    """Run the retrieval-mode benchmark, print the table, optionally write JSON."""
    from app.bench.retrieve import format_retrieve_bench, run_retrieve_bench

    result = run_retrieve_bench(runs=args.runs, warmup=args.warmup)
    print(format_retrieve_bench(result))
    write_json_report(args.json, result)
    return 0


def cmd_bench_graph(args: argparse.Namespace) -> int:
    """Run the incident-to-review benchmark, print the table, optionally write JSON."""
    from app.bench.graph import format_graph_bench, run_graph_bench

    result = run_graph_bench(runs=args.runs, warmup=args.warmup)
    print(format_graph_bench(result))
    write_json_report(args.json, result)
    return 0


def _timed(kinds: Any, name: str, what: str, runs: str, handler: Any, warmup: int = 3) -> None:
    """A bench whose options are ``--runs``, ``--warmup`` and ``--json``."""
    bench = kinds.add_parser(name, help=what)
    bench.add_argument("--runs", type=int, default=100, help=runs)
    bench.add_argument("--warmup", type=int, default=warmup, help="untimed rounds first")
    bench.add_argument("--json", metavar="OUT", help="also write every number here")
    bench.set_defaults(handler=handler)


def _add_retrieve(kinds: Any) -> None:
    _timed(
        kinds,
        "retrieve",
        "dense vs bm25 vs hybrid on the knowledge base",
        "timed retrievals per mode",
        cmd_bench_retrieve,
    )


#: Untimed rounds of the graph bench: a process embeds each knowledge doc's sentences the
#: first time a draft cites the doc (~10 ms a sentence, once); 20 rounds cover the shipped docs,
#: so the timed runs are the steady state of a running service.
GRAPH_WARMUP = 20


def _add_graph(kinds: Any) -> None:
    _timed(
        kinds,
        "graph",
        "incident -> awaiting review (and approve) in process",
        "timed incidents and approvals",
        cmd_bench_graph,
        warmup=GRAPH_WARMUP,
    )


def cmd_bench_collect(args: argparse.Namespace) -> int:
    """Run the collection benchmark against a real Prometheus, print the table, write JSON."""
    from app.bench.collect import format_collect_bench, run_collect_bench

    result = run_collect_bench(runs=args.runs, warmup=args.warmup)
    print(format_collect_bench(result))
    write_json_report(args.json, result)
    return 0


def _add_collect(kinds: Any) -> None:
    _timed(
        kinds,
        "collect",
        "evidence collection per incident against a real, backfilled Prometheus",
        "timed collections per contender",
        cmd_bench_collect,
    )


def cmd_bench_ingest(args: argparse.Namespace) -> int:
    """Run the SciFact ingest benchmark, print the table, optionally write JSON."""
    from app.bench.ingest import format_ingest_bench, run_ingest_bench

    result = run_ingest_bench(docs=args.docs, runs=args.runs, scifact_dir=Path(args.scifact))
    print(format_ingest_bench(result))
    write_json_report(args.json, result)
    return 0


def _add_ingest(kinds: Any) -> None:
    ingest = kinds.add_parser("ingest", help="SciFact docs/s into Chroma beside embedding alone")
    ingest.add_argument("--docs", type=int, default=1000, help="first SciFact docs to ingest")
    ingest.add_argument("--runs", type=int, default=1, help="passes, each into a new collection")
    ingest.add_argument("--scifact", default=str(DEFAULT_SCIFACT_DIR), help="BEIR SciFact folder")
    ingest.add_argument("--json", metavar="OUT", help="also write every number here")
    ingest.set_defaults(handler=cmd_bench_ingest)


def cmd_bench_scale(args: argparse.Namespace) -> int:
    """Run the growth benchmark, print the curve, optionally write JSON."""
    from app.bench.scale import format_scale_bench, run_scale_bench

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    result = run_scale_bench(
        sizes, queries=args.queries, history=args.history, scifact_dir=Path(args.scifact)
    )
    print(format_scale_bench(result))
    write_json_report(args.json, result)
    return 0


def _add_scale(kinds: Any) -> None:
    scale = kinds.add_parser("scale", help="the shipped engine's cost at 1k/10k/100k chunks")
    scale.add_argument("--sizes", default="1000,10000,100000", help="comma-separated chunk counts")
    scale.add_argument("--queries", type=int, default=50, help="timed SciFact test queries")
    scale.add_argument("--history", type=int, default=10_000, help="past incidents stored")
    scale.add_argument("--scifact", default=str(DEFAULT_SCIFACT_DIR), help="BEIR SciFact folder")
    scale.add_argument("--json", metavar="OUT", help="also write every number here")
    scale.set_defaults(handler=cmd_bench_scale)


def cmd_bench_inbox(args: argparse.Namespace) -> int:
    """Run the inbox benchmark, print the figures, optionally write JSON."""
    from app.bench.inbox import format_inbox_bench, run_inbox_bench

    result = run_inbox_bench(
        incidents=args.incidents,
        runs=args.runs,
        renders=args.renders,
        chromium=Path(args.chromium),
    )
    print(format_inbox_bench(result))
    write_json_report(args.json, result)
    return 0


def _add_inbox(kinds: Any) -> None:
    inbox = kinds.add_parser("inbox", help="first inbox page with 5,000 incidents: API and render")
    inbox.add_argument("--incidents", type=int, default=5000, help="index rows in the store")
    inbox.add_argument("--runs", type=int, default=50, help="timed requests per API case")
    inbox.add_argument("--renders", type=int, default=5, help="timed fresh pages in Chromium")
    inbox.add_argument("--chromium", default="/usr/bin/chromium", help="the browser to drive")
    inbox.add_argument("--json", metavar="OUT", help="also write every number here")
    inbox.set_defaults(handler=cmd_bench_inbox)


#: One registrar per benchmark.
REGISTRARS = (
    _add_embed,
    _add_retrieve,
    _add_graph,
    _add_collect,
    _add_ingest,
    _add_scale,
    add_http_parser,
    _add_inbox,
)


def add_bench_parser(subparsers: Any) -> None:
    """Register ``rca bench`` and its benchmarks.

    Args:
        subparsers: The object returned by ``ArgumentParser.add_subparsers``.
    """
    bench = subparsers.add_parser("bench", help="speed benchmarks, side by side in one process")
    kinds = bench.add_subparsers(dest="bench_command", required=True)
    for register in REGISTRARS:
        register(kinds)
