"""The embedder: integrity checks, equivalence with a reference path, semantic sanity."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from app.core.errors import ModelIntegrityError
from app.rag.embedding import (
    DIMENSIONS,
    TOKENIZER_PATH,
    ChromaEmbeddingFunction,
    MiniLmEmbedder,
    default_model_path,
)

TEXTS = [
    "ZeroDivisionError while calculating checkout discount",
    "payment provider timed out after 30 seconds",
    "a",
    "POS sale rejected: quantity must be a positive integer, got -3 for PLU 4011 " * 12,
    "The chiller monitoring service crashed behind the gateway and returned 502 Bad Gateway",
]


def reference_embeddings(texts: list[str]) -> np.ndarray:
    """An independent path: a bare ONNX session, tokenizer padded to a fixed 256."""
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=256)
    session = ort.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"])
    rows = []
    for text in texts:
        encoding = tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        hidden = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / mask.sum(axis=1, keepdims=True)
        rows.append(pooled[0] / np.linalg.norm(pooled[0]))
    return np.stack(rows)


def test_vectors_match_reference_path(embedder: MiniLmEmbedder) -> None:
    ours = embedder.embed_documents(TEXTS)
    reference = reference_embeddings(TEXTS)
    assert ours.shape == (len(TEXTS), DIMENSIONS)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines
    query = embedder.embed_query(TEXTS[1])
    assert float(query @ reference[1]) >= 0.9999


def test_vectors_are_unit_length_and_order_preserved(embedder: MiniLmEmbedder) -> None:
    vectors = embedder.embed_documents(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    reversed_vectors = embedder.embed_documents(list(reversed(TEXTS)))
    np.testing.assert_allclose(reversed_vectors[::-1], vectors, atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, DIMENSIONS)


def test_long_input_is_truncated_not_rejected(embedder: MiniLmEmbedder) -> None:
    long_text = "inventory service unavailable " * 200
    assert embedder.count_tokens(long_text) > 256
    assert embedder.embed_documents([long_text]).shape == (1, DIMENSIONS)


@pytest.mark.parametrize(
    ("a", "b", "c"),
    [
        (
            "the payment provider did not respond in time",
            "card payment request timed out waiting for the provider",
            "the refrigerator temperature sensor is offline",
        ),
        (
            "division by zero when computing the discount",
            "ZeroDivisionError in discount calculation",
            "stock level lookup returned 503",
        ),
    ],
)
def test_paraphrases_are_closer_than_unrelated(
    embedder: MiniLmEmbedder, a: str, b: str, c: str
) -> None:
    va, vb, vc = embedder.embed_documents([a, b, c])
    assert float(va @ vb) > 0.5
    assert float(va @ vc) < 0.3
    assert float(va @ vb) - float(va @ vc) > 0.3


def test_modified_model_file_is_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), tampered)
    with tampered.open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ModelIntegrityError, match="sha256"):
        MiniLmEmbedder(model_path=tampered)


def test_modified_tokenizer_is_refused(tmp_path: Path) -> None:
    tampered = tmp_path / "tokenizer.json"
    tampered.write_text(TOKENIZER_PATH.read_text().replace("[UNK]", "[UNKNOWN]", 1))
    with pytest.raises(ModelIntegrityError, match="tokenizer"):
        MiniLmEmbedder(tokenizer_path=tampered)


def test_missing_model_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelIntegrityError, match="not found"):
        MiniLmEmbedder(model_path=tmp_path / "absent.onnx")


def test_chroma_function_is_registered_and_uses_our_embedder(embedder: MiniLmEmbedder) -> None:
    from chromadb.utils.embedding_functions import known_embedding_functions

    assert known_embedding_functions[ChromaEmbeddingFunction.name()] is ChromaEmbeddingFunction
    function = ChromaEmbeddingFunction(embedder)
    vectors = function(["payment timeout"])
    np.testing.assert_allclose(vectors[0], embedder.embed_query("payment timeout"), atol=1e-6)


def test_a_repeated_query_is_embedded_once(embedder: MiniLmEmbedder) -> None:
    runs: list[int] = []
    real_run = embedder.run

    def counted(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        runs.append(len(ids))
        return real_run(ids, mask)

    embedder.run = counted  # type: ignore[method-assign]
    try:
        text = "a query asked by the knowledge base, the services and the history"
        first = embedder.embed_query(text)
        first[:] = 0.0  # a caller writing into its vector does not change the next answer
        second = embedder.embed_query(text)
    finally:
        del embedder.run
    assert runs == [1]
    np.testing.assert_allclose(second, embedder.embed_documents([text])[0], atol=1e-6)
