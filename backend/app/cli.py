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


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the API with uvicorn."""
    import uvicorn

    settings = get_settings()
    host = args.host or settings.host
    port = args.port or settings.port
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
    )
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    """Run one incident from a JSON file to the review point and print the RCA."""
    import asyncio
    import json

    from pydantic import ValidationError

    from app.runtime import open_runtime
    from app.schemas import IncidentCreate
    from app.smoke import print_rca

    try:
        body = IncidentCreate.model_validate(json.loads(Path(args.file).read_text()))
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        print(f"error: cannot read incident from {args.file}: {exc}", file=sys.stderr)
        return 2

    async def analyze() -> int:
        async with open_runtime(get_settings()) as runtime:
            created = await runtime.incidents.create(body)
        print(f"incident {created.id}: {created.status.value}")
        for rank, doc in enumerate(created.similar_error_docs, start=1):
            code = doc.metadata.get("error_code")
            print(f"  {rank}. {code:<20} similarity={doc.similarity:.3f} {doc.id}")
        if created.rca:
            print_rca(created.rca)
        return 0

    return asyncio.run(analyze())


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

    serve = sub.add_parser("serve", help="run the HTTP API (uvicorn)")
    serve.add_argument("--host", help="bind address (default: RCA_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: RCA_PORT, 8000)")
    serve.set_defaults(handler=cmd_serve)

    analyze = sub.add_parser("analyze", help="run one incident (JSON file) to the review point")
    analyze.add_argument("file", help="incident JSON (the body of POST /api/incidents)")
    analyze.set_defaults(handler=cmd_analyze)

    smoke = sub.add_parser("smoke", help="crash the sample app and run that incident end to end")
    smoke.set_defaults(handler=cmd_smoke)

    from app.bench.commands import add_bench_parser
    from app.evaluation.commands import add_eval_parser

    add_eval_parser(sub)
    add_bench_parser(sub)
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
