"""Windows of long documents: short overlapping passages stored beside the document they cut.

The embedding model reads at most 256 tokens, and one vector for a whole text blurs what each
part says. With windows on (``RCA_WINDOW_TOKENS`` > 0), a document longer than a window is stored
as itself *and* as title-prefixed windows of ``size`` model tokens every ``stride`` tokens. Each
window is a chunk whose ``parent_id`` metadata names the document, and ``window_start`` /
``window_end`` (character offsets in the body) mark it as a window. The dense leg scores a document
by its best chunk, whole or window; the keyword leg indexes documents only, because BM25 needs
the whole text's term counts and length (``app.rag.bm25``), and a ranked doc is always the whole
document (``app.rag.candidates``). A text of at most ``size`` tokens gets no windows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from tokenizers import Tokenizer

from app.rag.embedding import TOKENIZER_PATH
from app.rag.ingest import KnowledgeChunk

#: Metadata key naming the document a window belongs to.
PARENT_KEY = "parent_id"
#: Metadata keys: the character span ``[start, end)`` of a window's passage in its doc's body.
WINDOW_START_KEY = "window_start"
WINDOW_END_KEY = "window_end"
#: Model tokens per window and between window starts, chosen on SciFact train (shared README).
DEFAULT_WINDOW_TOKENS = 96
DEFAULT_WINDOW_STRIDE = 48
#: A sentence of fewer words is joined to the next one (headings such as "Methods.").
MIN_SENTENCE_WORDS = 6

# A sentence ends at . ! or ? before whitespace and a capital, digit or bracket, or at a line end.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])|\n+")


class _Chunk(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...


def parent_of(chunk: _Chunk) -> str:
    """The document a chunk belongs to (itself when it is not a window)."""
    return str(chunk.metadata.get(PARENT_KEY) or chunk.id)


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


def passage_spans(offsets: Offsets, size: int, stride: int) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` in the body of each window's passage.

    Spans are cut at token boundaries taken from ``offsets`` so the body text is kept as
    written. A doc without body tokens has no passages.
    """
    if not offsets:
        return []
    return [
        (offsets[start][0], offsets[end - 1][1])
        for start, end in window_spans(len(offsets), size, stride)
    ]


def sentence_spans(body: str) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of the body's sentences (short ones joined to the next).

    A body of one sentence has no spans: its sentence is the document itself.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in [*_SENTENCE_END.finditer(body), None]:
        end = match.start() if match else len(body)
        text = body[start:end]
        if match is not None and len(text.split()) < MIN_SENTENCE_WORDS:
            continue
        if text.strip():
            lead = len(text) - len(text.lstrip())
            spans.append((start + lead, start + len(text.rstrip())))
        start = match.end() if match else len(body)
    return spans if len(spans) > 1 else []


def _window_text(head: str, passage: str) -> str:
    return f"{head} {passage}" if head else passage


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
    *,
    whole: bool = True,
    sentences: bool = False,
) -> list[KnowledgeChunk]:
    """A titled document as stored: the whole document first, then its windows when long.

    Args:
        doc_id: The document's id; windows are ``<doc_id>#w<n>``.
        title: Put in front of every window (and kept as ``title`` metadata when set).
        body: The text to cut.
        metadata: Extra metadata copied onto every chunk.
        size: Model tokens per window.
        stride: Tokens between window starts.
        offsets: The body's word-piece spans when already computed (``wordpiece_offsets``).
        whole: Include the whole document (its text is the title, a space, then the body);
            ``False`` returns the windows only.
        sentences: Also store each sentence of a body of two or more as a passage
            (``<doc_id>#s<n>``, title in front), whatever the body's length; ``size`` 0 then
            stores sentences without windows.

    Returns:
        The chunks; each names ``doc_id`` in ``parent_id``, a window also its span in the body.
        A body of at most ``size`` tokens has no windows.
    """
    base: dict[str, str | int] = {**(metadata or {}), PARENT_KEY: doc_id}
    if title:
        base["title"] = title
    chunks = [KnowledgeChunk(id=doc_id, text=f"{title} {body}".strip(), metadata=base)]
    head = title.strip()

    def passages(kind: str, spans: Sequence[tuple[int, int]]) -> list[KnowledgeChunk]:
        return [
            KnowledgeChunk(
                id=f"{doc_id}#{kind}{n}",
                text=_window_text(head, body[start:end]),
                metadata={**base, WINDOW_START_KEY: start, WINDOW_END_KEY: end},
            )
            for n, (start, end) in enumerate(spans)
        ]

    if size > 0:
        pieces = offsets if offsets is not None else wordpiece_offsets([body])[0]
        if len(pieces) > size:
            chunks += passages("w", passage_spans(pieces, size, stride))
    if sentences:
        chunks += passages("s", sentence_spans(body))
    return chunks if whole else chunks[1:]


def batch_offsets(bodies: Sequence[str], size: int) -> list[Offsets | None]:
    """Each body's word-piece spans, tokenized in one batch; none needed when ``size`` is 0."""
    return list(wordpiece_offsets(bodies)) if size > 0 else [None] * len(bodies)


def with_windows(
    chunks: Sequence[KnowledgeChunk], size: int, stride: int, *, sentences: bool = False
) -> list[KnowledgeChunk]:
    """Knowledge chunks followed by the windows of the long ones (``size`` 0: no windows).

    A knowledge chunk's first line (an entry's ``Error:`` line, a runbook section's heading)
    is its title: every window of the rest starts with it. ``sentences`` adds each sentence
    of the rest as a passage too.
    """
    if size <= 0 and not sentences:
        return list(chunks)
    heads, bodies = [], []
    for chunk in chunks:
        head, _, rest = chunk.text.partition("\n")
        heads.append(head.strip())
        bodies.append(rest)
    windows = [
        window
        for chunk, head, body, spans in zip(
            chunks,
            heads,
            bodies,
            batch_offsets(bodies, size),
            strict=True,
        )
        for window in window_chunks(
            chunk.id,
            head,
            body,
            chunk.metadata,
            size,
            stride,
            spans,
            whole=False,
            sentences=sentences,
        )
    ]
    return [*chunks, *windows]


def is_window(metadata: Mapping[str, Any]) -> bool:
    """Whether a chunk with this metadata is a window of a document rather than a document."""
    return WINDOW_START_KEY in metadata
