"""Cold ingest vs restart with an unchanged persisted corpus, on SciFact's 5,183 abstracts.

Ingests the corpus (text = title + " " + abstract, as generic chunks with content-hash ids) into a
persistent Chroma store (what ``RCA_CHROMA_PATH`` opens) twice, each time in a fresh process
through the service's own incremental sync (``app.rag.knowledge.sync_store``): first into an
empty store (cold: every abstract is embedded), then again with the same corpus (warm: a restart,
nothing is embedded). Prints both timings. Not part of the test suite; the cold run takes minutes
on two cores.

    .venv/bin/python scripts/ingest_scifact_restart.py [--corpus PATH] [--store DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl"
COLLECTION = "scifact-restart"


def run_phase(corpus: Path, store: Path, limit: int | None) -> dict[str, float | int]:
    """One process's ingest: open the store, sync it to the corpus, report timings."""
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT / "backend"))
    from app.core.config import Settings
    from app.rag.embedding import default_embedder
    from app.rag.ingest import KnowledgeChunk, chunk_id
    from app.rag.knowledge import sync_store
    from app.rag.store import VectorStore, make_chroma_client

    chunks = []
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            text = f"{doc.get('title', '')} {doc.get('text', '')}".strip()
            metadata: dict[str, str | int] = {"source": "scifact", "doc_id": str(doc["_id"])}
            chunks.append(KnowledgeChunk(id=chunk_id(text, "doc-"), text=text, metadata=metadata))
            if limit is not None and len(chunks) >= limit:
                break
    settings = Settings(chroma_path=store, collection_name=COLLECTION, _env_file=None)
    store_ = VectorStore(make_chroma_client(settings), default_embedder(), COLLECTION)
    opened = time.perf_counter()
    result = sync_store(store_, chunks, batch_size=settings.ingest_batch_size)
    finished = time.perf_counter()
    return {
        "docs": len(chunks),
        "count": store_.count(),
        "added": result.added,
        "unchanged": result.unchanged,
        "removed": result.removed,
        "embedded": result.embedded,
        "open_seconds": round(opened - started, 2),
        "sync_seconds": round(finished - opened, 2),
    }


def main() -> int:
    """Run the cold and the warm phase in fresh processes and print both timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--store", type=Path, help="persistent store folder (default: a new tmp)")
    parser.add_argument("--limit", type=int, help="only the first N docs (a quick check)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(run_phase(args.corpus, args.store, args.limit)))
        return 0
    store = args.store or Path(tempfile.mkdtemp(prefix="scifact-chroma-"))
    results = {}
    for phase in ("cold", "warm"):
        command = [sys.executable, __file__, "--phase", phase, "--corpus", str(args.corpus)]
        command += ["--store", str(store)]
        if args.limit:
            command += ["--limit", str(args.limit)]
        started = time.perf_counter()
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - started
        results[phase] = {**json.loads(out.strip().splitlines()[-1]), "process_seconds": wall}
        row = results[phase]
        print(
            f"{phase:<5} docs={row['docs']} embedded={row['embedded']} "
            f"added={row['added']} unchanged={row['unchanged']} removed={row['removed']} "
            f"sync={row['sync_seconds']:.1f}s open={row['open_seconds']:.1f}s "
            f"process={wall:.1f}s",
            flush=True,
        )
    print(f"store: {store}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
