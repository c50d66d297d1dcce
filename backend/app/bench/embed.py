"""``rca bench embed``: our embedder against a bare ONNX session and Chroma's stock function.

Three ways to embed with the same int8 model file, side by side in one process:

- ``ours``: ``MiniLmEmbedder`` (one session, batches padded to their longest input, sorted by
  length).
- ``bare``: the session ``ours`` runs (``open_session(load_model(...))``: the pinned graph
  without its Softmax NaN guards, one slow fusion off), called directly. Per query only
  ``session.run`` plus pooling is timed (tokens are prepared beforehand), so it is the floor our
  wrapper is measured against; for documents it tokenizes batches in the order given.
- ``bare_pinned``: the same calls on a default session over the unmodified model file, to show
  what the session set-up gains.
- ``stock``: Chroma's ``ONNXMiniLM_L6_V2`` pointed at the same local files through symlinks
  in a temporary download folder, so it never downloads. It pads every input to 256 tokens.
  Chroma's ``DefaultEmbeddingFunction`` builds a new instance (a new ONNX session) on every
  call; that is measured as ``stock_new_instance``, and a reused instance as ``stock_reused``.
"""

from __future__ import annotations

import platform
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

from app.bench.common import (
    DEFAULT_MODELS_DIR,
    DEFAULT_SCIFACT_DIR,
    format_load,
    format_timings,
    load_average,
    machine,
    scifact_docs,
    time_calls,
    time_passes,
)
from app.core.config import PROJECT_ROOT
from app.rag.embedding import (
    DEFAULT_BATCH_SIZE,
    MAX_TOKENS,
    TOKENIZER_PATH,
    MiniLmEmbedder,
    Vectors,
    default_model_path,
    load_model,
    mean_pool_normalise,
    open_session,
)
from app.rag.ingest import CHUNK_DELIMITER

DEFAULT_KNOWLEDGE_PATH = PROJECT_ROOT / "data" / "knowledge" / "error_docs.txt"
#: Chroma's stock function expects these beside ``model.onnx``; only tokenizer.json is vendored.
STOCK_SIDE_FILES = ("config.json", "special_tokens_map.json", "tokenizer_config.json", "vocab.txt")
#: Ours and the bare session use the same batch size; the stock function batches 32 itself.
BATCH_SIZE = DEFAULT_BATCH_SIZE
STOCK_BATCH_SIZE = 32
#: Texts per interleaving round: whole batches of every embedder. A round that is not a multiple
#: of 32 would cut the stock function's batches short, and on this CPU smaller batches run faster
#: per document (stock at 20 measured ~10 % faster than at 32), so it would not be measured as
#: Chroma runs it.
PASS_CHUNK = 4 * STOCK_BATCH_SIZE

#: Short, incident-like queries, cycled through the timed runs.
QUERIES = (
    "CO-500 checkout returns 500 ZeroDivisionError in apply_discount",
    "payment provider read timeout 408 during checkout",
    "inventory service 503 connection pool exhausted",
    "till rejects sale with quantity 0, HTTP 422",
    "chiller gateway 502 bad gateway, temperature telemetry stopped",
    "card terminal payment fails with 502 from the acquirer",
    "PLU lookup unavailable at the till, 503",
    "checkout latency spike after deploy",
    "POS sale rejected: too many lines",
    "sale amount does not match the sum of the lines",
)


class BareSession:
    """The model called directly: a tokenizer padded to the longest input and one session."""

    def __init__(
        self, session: ort.InferenceSession, tokenizer_path: Path = TOKENIZER_PATH
    ) -> None:
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.session = session

    def tokenize(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.int64]]:
        """The session's inputs for one batch."""
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def run(self, feed: dict[str, npt.NDArray[np.int64]]) -> Vectors:
        """``session.run`` and masked mean pooling with L2 normalisation."""
        hidden: npt.NDArray[np.float32] = self.session.run(None, feed)[0]
        return mean_pool_normalise(hidden, feed["attention_mask"])

    def embed(self, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> Vectors:
        """Embed in the given order, batches of ``batch_size`` padded to their longest."""
        parts = [
            self.run(self.tokenize(texts[i : i + batch_size]))
            for i in range(0, len(texts), batch_size)
        ]
        return np.concatenate(parts)


@contextmanager
def stock_function_class(models_dir: Path, model_path: Path) -> Iterator[type[Any]]:
    """Chroma's stock MiniLM class, pointed at a temporary folder of symlinks to local files.

    Args:
        models_dir: Holds the tokenizer side files Chroma expects (config.json, vocab.txt …).
        model_path: The int8 ``model.onnx`` our embedder uses.

    Yields:
        A subclass of ``ONNXMiniLM_L6_V2`` whose ``DOWNLOAD_PATH`` is the temporary folder and
        whose download method raises instead of touching the network.
    """
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    with tempfile.TemporaryDirectory(prefix="rca-bench-stock-") as tmp:
        folder = Path(tmp) / ONNXMiniLM_L6_V2.EXTRACTED_FOLDER_NAME
        folder.mkdir()
        (folder / "model.onnx").symlink_to(model_path.resolve())
        (folder / "tokenizer.json").symlink_to(TOKENIZER_PATH.resolve())
        for name in STOCK_SIDE_FILES:
            (folder / name).symlink_to((models_dir / name).resolve())

        class LocalStockMiniLm(ONNXMiniLM_L6_V2):
            DOWNLOAD_PATH = Path(tmp)

            def _download(  # type: ignore[override]
                self, url: str, fname: str, chunk_size: int = 1024
            ) -> None:
                raise RuntimeError(f"bench refuses to download {url}: a local file is missing")

        yield LocalStockMiniLm


def stock_unavailable(models_dir: Path) -> str | None:
    """Why the stock function cannot run offline here, or ``None`` when it can.

    Args:
        models_dir: The folder expected to hold the tokenizer side files.

    Returns:
        A reason to print, or ``None``.
    """
    missing = [name for name in STOCK_SIDE_FILES if not (models_dir / name).is_file()]
    if missing:
        return f"stock Chroma function skipped: {', '.join(missing)} not found in {models_dir}"
    return None


def knowledge_docs(path: Path, count: int) -> list[str]:
    """Knowledge-base entries (split on the ``---`` line), repeated to at least ``count``.

    Args:
        path: The error-docs file.
        count: Minimum number of documents.

    Returns:
        Exactly ``count`` documents.
    """
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    entries = [e.strip() for e in text.split(CHUNK_DELIMITER) if e.strip()]
    repeats = -(-count // len(entries))
    return (entries * repeats)[:count]


def _agreement(a: Vectors, b: Vectors) -> dict[str, float]:
    cosines = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "min_cosine": round(float(cosines.min()), 6),
        "max_abs_diff": float(np.abs(a - b).max()),
    }


def run_embed_bench(
    runs: int = 100,
    kb_docs: int = 512,
    scifact_count: int = 200,
    models_dir: Path = DEFAULT_MODELS_DIR,
    scifact_dir: Path = DEFAULT_SCIFACT_DIR,
    knowledge_path: Path = DEFAULT_KNOWLEDGE_PATH,
    warmup: int = 3,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure per-query latency and document throughput of every available embedder.

    Args:
        runs: Timed calls per query embedder.
        kb_docs: Knowledge-base entries (repeated) for the throughput pass.
        scifact_count: SciFact abstracts for the second throughput pass (0 skips it).
        models_dir: Tokenizer side files for the stock Chroma function.
        scifact_dir: The BEIR SciFact folder.
        knowledge_path: The error-docs file.
        warmup: Untimed calls before each query timing.
        log: Progress and skip reasons go here.

    Returns:
        ``per_query`` timings, ``docs_per_s`` per corpus, ``ratios`` with their targets,
        vector ``agreement``, ``skipped`` reasons, and ``machine`` / ``config`` details.
    """
    load_before = load_average()
    model_path = default_model_path()
    ours = MiniLmEmbedder(model_path=model_path)
    bare = BareSession(open_session(load_model(model_path)))
    bare_pinned = BareSession(
        ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    )
    queries = list(QUERIES)
    n = len(queries)
    prepared = [bare.tokenize([q]) for q in queries]
    skipped: dict[str, str] = {}
    agreement: dict[str, dict[str, float]] = {}

    corpora: dict[str, list[str]] = {"kb": knowledge_docs(knowledge_path, kb_docs)}
    if scifact_count > 0:
        if (scifact_dir / "corpus.jsonl").is_file():
            corpora["scifact"] = scifact_docs(scifact_dir, scifact_count)
        else:
            skipped["scifact"] = f"SciFact skipped: {scifact_dir / 'corpus.jsonl'} not found"
            log(skipped["scifact"])

    query_calls: dict[str, Callable[[int], object]] = {
        "ours": lambda i: ours.embed_query(queries[i % n]),
        "bare": lambda i: bare.run(prepared[i % n]),
        "bare_pinned": lambda i: bare_pinned.run(prepared[i % n]),
    }
    doc_embedders: dict[str, Callable[[list[str]], object]] = {
        "ours": ours.embed_documents,
        "bare": bare.embed,
        "bare_pinned": bare_pinned.embed,
    }
    ours_vectors = np.stack([ours.embed_query(q) for q in queries])
    agreement["bare_vs_ours"] = _agreement(
        np.concatenate([bare.run(p) for p in prepared]), ours_vectors
    )
    agreement["bare_pinned_vs_ours"] = _agreement(
        np.concatenate([bare_pinned.run(p) for p in prepared]), ours_vectors
    )
    with ExitStack() as stack:
        reason = stock_unavailable(models_dir)
        if reason:
            skipped["stock"] = reason
            log(reason)
        else:
            stock_class = stack.enter_context(stock_function_class(models_dir, model_path))
            reused = stock_class()
            # Chroma's DefaultEmbeddingFunction builds a new instance (new session) per call.
            query_calls["stock_new_instance"] = lambda i: stock_class()([queries[i % n]])
            query_calls["stock_reused"] = lambda i: reused([queries[i % n]])
            doc_embedders["stock_reused"] = reused
            agreement["stock_vs_ours"] = _agreement(np.stack(reused(queries)), ours_vectors)

        log(f"per query, interleaved: {', '.join(query_calls)} ({runs} runs each)")
        per_query = {k: asdict(v) for k, v in time_calls(query_calls, runs, warmup).items()}
        docs_per_s: dict[str, dict[str, Any]] = {}
        for name, texts in corpora.items():
            log(f"docs/s on {name} ({len(texts)} docs), interleaved: {', '.join(doc_embedders)}")
            passes = time_passes(doc_embedders, texts, PASS_CHUNK)
            docs_per_s[name] = {"docs": len(texts), **{k: asdict(v) for k, v in passes.items()}}

    return {
        "machine": machine(
            load_before,
            processor=platform.processor() or platform.machine(),
            python=platform.python_version(),
            onnxruntime=ort.__version__,
        ),
        "config": {
            "runs": runs,
            "warmup": warmup,
            "kb_docs": kb_docs,
            "scifact_docs": len(corpora.get("scifact", [])),
            "batch_size": BATCH_SIZE,
            "model_path": str(model_path),
        },
        "per_query": per_query,
        "docs_per_s": docs_per_s,
        "ratios": ratios(per_query, docs_per_s),
        "agreement": agreement,
        "skipped": skipped,
    }


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def ratios(
    per_query: dict[str, dict[str, Any]], docs_per_s: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """The headline comparisons with their targets.

    Args:
        per_query: Timings by embedder.
        docs_per_s: Throughput by corpus and embedder.

    Returns:
        Rows of ``{"name", "value", "target", "met"}``; ``value`` is ``None`` when a side was
        skipped.
    """

    def median(name: str) -> float | None:
        return per_query[name]["median_ms"] if name in per_query else None

    def rate(corpus: str, name: str) -> float | None:
        entry = docs_per_s.get(corpus, {}).get(name)
        return entry["docs_per_s"] if entry else None

    rows: list[tuple[str, float | None, str, Callable[[float], bool]]] = [
        (
            "ours/bare per query (median ms)",
            _ratio(median("ours"), median("bare")),
            "<= 1.2",
            lambda v: v <= 1.2,
        ),
        (
            "stock new instance/ours per query",
            _ratio(median("stock_new_instance"), median("ours")),
            ">= 5",
            lambda v: v >= 5,
        ),
        (
            "stock reused/ours per query",
            _ratio(median("stock_reused"), median("ours")),
            ">= 5",
            lambda v: v >= 5,
        ),
    ]
    for corpus in docs_per_s:
        rows.append(
            (
                f"ours/bare docs/s ({corpus})",
                _ratio(rate(corpus, "ours"), rate(corpus, "bare")),
                "0.9-1.1",
                lambda v: 0.9 <= v <= 1.1,
            )
        )
        rows.append(
            (
                f"bare/bare pinned docs/s ({corpus})",
                _ratio(rate(corpus, "bare"), rate(corpus, "bare_pinned")),
                "report",
                lambda v: True,
            )
        )
        target, check = (">= 2", lambda v: v >= 2) if corpus == "kb" else ("report", lambda v: True)
        rows.append(
            (
                f"ours/stock docs/s ({corpus})",
                _ratio(rate(corpus, "ours"), rate(corpus, "stock_reused")),
                target,
                check,
            )
        )
    return [
        {
            "name": name,
            "value": value,
            "target": target,
            "met": None if value is None else check(value),
        }
        for name, value, target, check in rows
    ]


def format_embed_bench(result: dict[str, Any]) -> str:
    """The bench result as plain-text tables.

    Args:
        result: The output of ``run_embed_bench``.

    Returns:
        Printable text.
    """
    lines = format_timings("per query", result["per_query"], width=22)
    lines.append("")
    columns = {"ours": "ours", "bare": "bare", "bare_pinned": "pinned", "stock_reused": "stock"}
    lines.append(f"{'docs/s':<22}{'docs':>6}" + "".join(f"{c:>10}" for c in columns.values()))
    for corpus, entry in result["docs_per_s"].items():
        cells = [
            f"{entry[n]['docs_per_s']:>10.1f}" if n in entry else f"{'-':>10}" for n in columns
        ]
        lines.append(f"{corpus:<22}{entry['docs']:>6}" + "".join(cells))
    lines.append("")
    lines.append(f"{'ratio':<40}{'value':>8}  {'target':<8} met")
    for row in result["ratios"]:
        value = "-" if row["value"] is None else f"{row['value']:.2f}"
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        lines.append(f"{row['name']:<40}{value:>8}  {row['target']:<8} {met}")
    for name, numbers in result["agreement"].items():
        lines.append(
            f"agreement {name}: min cosine {numbers['min_cosine']:.6f}, "
            f"max |diff| {numbers['max_abs_diff']:.2e}"
        )
    lines.append(format_load(result["machine"]["load_average_1m"]))
    for reason in result["skipped"].values():
        lines.append(f"skipped: {reason}")
    return "\n".join(lines)
