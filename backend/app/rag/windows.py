"""Windows of long documents: short overlapping passages stored as chunks of a parent doc.

The embedding model reads at most 256 tokens, so one vector per document never sees the tail of a
long text. ``window_chunks`` cuts a document's body into windows of ``size`` model tokens every
``stride`` tokens, puts the title in front of each, and returns them as chunks whose
``parent_id`` metadata names the document; the engine then scores a document by its best window
(``EngineConfig.collapse_windows``). A text of at most ``size`` tokens stays one chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from tokenizers import Tokenizer

from app.rag.embedding import TOKENIZER_PATH
from app.rag.ingest import KnowledgeChunk

#: Metadata key naming the document a window belongs to.
PARENT_KEY = "parent_id"
#: Model tokens per window and between window starts, chosen on SciFact train (shared README).
DEFAULT_WINDOW_TOKENS = 96
DEFAULT_WINDOW_STRIDE = 48

#: Character spans (start, end) of each token of a text, in order.
Offsets = list[tuple[int, int]]


def window_spans(n_tokens: int, size: int, stride: int) -> list[tuple[int, int]]:
    """Token ranges ``[start, end)`` of the windows over ``n_tokens`` tokens.

    Windows start at 0, ``stride``, ``2·stride`` … and stop at the first one that reaches the
    last token. A text of at most ``size`` tokens, including an empty one, is a single window.

    Raises:
        ValueError: When ``size`` or ``stride`` is out of range.
    """
    if size <= 0 or not 0 < stride <= size:
        raise ValueError(f"need 0 < stride <= size, got size {size}, stride {stride}")
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n_tokens)
        spans.append((start, end))
        if end >= n_tokens:
            return spans
        start += stride


def split_windows(title: str, body: str, offsets: Offsets, size: int, stride: int) -> list[str]:
    """The texts of one doc's windows: the title, a space, then a slice of the body.

    Slices are cut at token boundaries taken from ``offsets`` so the body text is kept as
    written. A doc without body tokens is one window holding only its title.
    """
    head = title.strip()
    if not offsets:
        return [head]
    texts = []
    for start, end in window_spans(len(offsets), size, stride):
        passage = body[offsets[start][0] : offsets[end - 1][1]]
        texts.append(f"{head} {passage}" if head else passage)
    return texts


@lru_cache(maxsize=1)
def _wordpiece() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def wordpiece_offsets(texts: Sequence[str]) -> list[Offsets]:
    """Character spans of the embedding model's word pieces, without special tokens."""
    encodings = _wordpiece().encode_batch(list(texts), add_special_tokens=False)
    return [list(e.offsets) for e in encodings]


def window_chunks(
    doc_id: str,
    title: str,
    body: str,
    metadata: Mapping[str, Any] | None = None,
    size: int = DEFAULT_WINDOW_TOKENS,
    stride: int = DEFAULT_WINDOW_STRIDE,
    offsets: Offsets | None = None,
) -> list[KnowledgeChunk]:
    """One document as chunks: itself when short, else its title-prefixed windows.

    Args:
        doc_id: The document's id; windows are ``<doc_id>#w<n>``.
        title: The title (kept in metadata and in front of every window).
        body: The text to cut.
        metadata: Extra metadata copied onto every chunk.
        size: Model tokens per window.
        stride: Tokens between window starts.
        offsets: The body's word-piece spans when already computed (``wordpiece_offsets``).

    Returns:
        The chunks; each names ``doc_id`` in ``parent_id``.
    """
    spans = offsets if offsets is not None else wordpiece_offsets([body])[0]
    base: dict[str, str | int] = {**(metadata or {}), PARENT_KEY: doc_id}
    if title:
        base["title"] = title
    if len(spans) <= size:
        return [KnowledgeChunk(id=doc_id, text=f"{title} {body}".strip(), metadata=base)]
    texts = split_windows(title, body, spans, size, stride)
    return [
        KnowledgeChunk(id=f"{doc_id}#w{n}", text=text, metadata=dict(base))
        for n, text in enumerate(texts)
    ]
