"""``rca bench``: one subcommand per benchmark; each module adds its own parser here."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.bench.embed import DEFAULT_MODELS_DIR, DEFAULT_SCIFACT_DIR
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
    embed.add_argument("--kb-docs", type=int, default=500, help="knowledge-base docs (repeated)")
    embed.add_argument("--scifact-docs", type=int, default=1000, help="SciFact docs (0 skips)")
    embed.add_argument(
        "--models-dir",
        default=str(DEFAULT_MODELS_DIR),
        help="tokenizer side files for Chroma's stock function",
    )
    embed.add_argument("--scifact", default=str(DEFAULT_SCIFACT_DIR), help="BEIR SciFact folder")
    embed.add_argument("--json", metavar="OUT", help="also write every number here")
    embed.set_defaults(handler=cmd_bench_embed)


#: One registrar per benchmark.
REGISTRARS = (
    _add_embed,
    add_http_parser,
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
