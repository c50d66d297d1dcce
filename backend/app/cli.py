"""The ``rca`` command: serve, ingest, analyze, smoke, eval, bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from app.core.config import get_settings
from app.core.errors import AppError


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest the knowledge base and print what was stored."""
    from app.rag.embedding import default_embedder
    from app.rag.knowledge import build_knowledge_base

    settings = get_settings()
    path = Path(args.path) if args.path else settings.knowledge_path
    knowledge = build_knowledge_base(settings, default_embedder(), path=path)
    report = knowledge.report
    print(f"ingested {report.count} error-doc chunk(s)")
    for code, doc_id in report.ids_by_code.items():
        print(f"  {code:<20} {doc_id}")
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_smoke(args: argparse.Namespace) -> int:
    """Crash the sample app and run the incident end to end."""
    from app.smoke import run_smoke

    return run_smoke()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="rca", description="Incident root-cause-analysis agent")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="ingest the knowledge base and print the ids")
    ingest.add_argument("path", nargs="?", help="error-docs file (default: RCA_KNOWLEDGE_PATH)")
    ingest.set_defaults(handler=cmd_ingest)

    smoke = sub.add_parser("smoke", help="crash the sample app and run that incident end to end")
    smoke.set_defaults(handler=cmd_smoke)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rca`` console script."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except AppError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    raise SystemExit(main())
