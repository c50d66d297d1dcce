"""Claim-level citation checking: does the cited text actually say what the claim says?

For each (claim, cited id) pair the checker finds the cited text's best-supporting sentence
and scores the pair from two signals:

- semantic: cosine similarity between the claim and each sentence (our MiniLM embedder);
- key tokens: error codes, exception types, ``file:line`` locations and HTTP statuses named by
  the claim. Shared key tokens raise the score; an error code the claim names that the cited
  text contradicts (it names other codes but not this one) caps it below the weak threshold.

A claim that repeats one of the cited text's sentences word for word (the extractive drafts
quote their evidence) is supported by that sentence without the embedder, unless the claim
names a code the text contradicts or another supplied doc holds the same sentence; both fall
back to the scoring above. Embedding costs about 0.2 ms per token on two cores, and the quote is
the stronger proof.

The verdict is ``supported`` / ``weak`` / ``unsupported`` with the best sentence and its
character span in the cited text, so the reviewer UI can highlight it. The reporter's own words
(``incident:message``) can support only a claim about what the incident reports: a claim that
rests on them alone and is not phrased "The incident reports …" is at best ``weak``
(``rests_on_reporter``). Thresholds were fixed
on the labelled pairs in ``data/eval/claims.jsonl`` (see docs/architecture/grounding.md).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from app.rag.embedding import Embedder, Vectors

#: Fixed on data/eval/claims.jsonl before any incident eval was run (see the docs for the sweep).
SUPPORTED_THRESHOLD = 0.50
WEAK_THRESHOLD = 0.42
#: The cited doc must be at least this close to the best other supplied doc ...
SUPPORTED_MARGIN = 0.02
#: ... and a doc beaten by another by more than this is a misattribution.
MISATTRIBUTION_MARGIN = -0.05
SEMANTIC_WEIGHT = 0.75
KEY_WEIGHT = 0.25

#: A sentence ends at . ; ! or ? followed by white space (not inside ``checkout_service.py``).
_SENTENCE_RE = re.compile(r"[^\n]+?(?:[.;!?]+(?=\s|$)|$)", re.MULTILINE)
_CODE_RE = re.compile(r"\b[A-Z]{2,6}-\d{3}(?:-[A-Z]{2,10})?\b")
_EXCEPTION_RE = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Timeout)\b")
_LOCATION_RE = re.compile(r"\b[\w/.-]+\.(?:py|java|js|ts|go|rb|kt):\d+\b")
_PY_FRAME_RE = re.compile(r'File "(?:[^"]*/)?([^"/]+)", line (\d+)')
#: An HTTP status, also counted in the plural ("503s").
_STATUS_RE = re.compile(r"\b([1-5]\d\d)s?\b")
#: A shorter repeated "sentence" ("ok", "500") is too common to prove a quote.
MIN_QUOTE_CHARS = 8


#: The evidence ids that hold the reporter's own words rather than an observation.
REPORTER_IDS = frozenset({"incident:message"})
#: How a claim says it only repeats the report: "The incident reports …", "checkout reported: …".
_REPORTED_RE = re.compile(
    r"^\s*(?:the\s+)?[\w.-]+\s+(?:reports|reported|states|says|shows)\b", re.IGNORECASE
)


def rests_on_reporter(claim: str, evidence_ids: list[str]) -> bool:
    """Whether a claim's only support is the reporter's words while it asserts more than a report.

    Args:
        claim: The claim text.
        evidence_ids: The ids the claim still cites.

    Returns:
        True when every cited id is a reporter id and the claim is not phrased as
        "The incident reports …"; such a claim cannot be ``supported``.
    """
    if not evidence_ids or not set(evidence_ids) <= REPORTER_IDS:
        return False
    return _REPORTED_RE.match(claim) is None


class Support(StrEnum):
    """How well a cited text supports a claim."""

    SUPPORTED = "supported"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class SupportResult:
    """The verdict for one (claim, cited text) pair."""

    support: Support
    score: float
    sentence: str
    span: tuple[int, int]
    semantic: float
    key_overlap: float | None
    contradiction: bool
    margin: float | None = None
    quoted: bool = False


def sentences_with_spans(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Sentences (or clause runs) of ``text`` with their character spans."""
    found = []
    for match in _SENTENCE_RE.finditer(text):
        raw = match.group(0)
        stripped = raw.strip()
        if len(stripped) < 3:
            continue
        start = match.start() + (len(raw) - len(raw.lstrip()))
        found.append((stripped, (start, start + len(stripped))))
    if not found and text.strip():
        stripped = text.strip()
        start = text.index(stripped)
        found.append((stripped, (start, start + len(stripped))))
    return found


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def quoted_sentence(claim: str, sentences: list[tuple[str, tuple[int, int]]]) -> int:
    """Index of the longest sentence that ``claim`` repeats word for word, or -1."""
    said = _folded(claim)
    best, best_length = -1, 0
    for index, (sentence, _) in enumerate(sentences):
        folded = _folded(sentence)
        if len(folded) >= MIN_QUOTE_CHARS and len(folded) > best_length and folded in said:
            best, best_length = index, len(folded)
    return best


def key_tokens(text: str) -> set[str]:
    """Exact tokens a claim can share with its evidence."""
    tokens = {m.upper() for m in _CODE_RE.findall(text)}
    tokens |= set(_EXCEPTION_RE.findall(text))
    tokens |= {m.split("/")[-1] for m in _LOCATION_RE.findall(text)}
    tokens |= {f"{name}:{line}" for name, line in _PY_FRAME_RE.findall(text)}
    tokens |= set(_STATUS_RE.findall(text))
    return tokens


def error_codes(text: str) -> set[str]:
    """Error codes named in a text."""
    return {m.upper() for m in _CODE_RE.findall(text)}


class CitationChecker:
    """Scores claims against cited texts with the project's embedder."""

    def __init__(self, embedder: Embedder, cache_size: int = 4096) -> None:
        self.embedder = embedder
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._cache_size = cache_size

    def _embed(self, texts: list[str]) -> Vectors:
        """Embed with a small LRU: knowledge docs recur in every run."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for text, vector in zip(missing, self.embedder.embed_documents(missing), strict=True):
                self._cache[text] = vector
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        for text in texts:
            self._cache.move_to_end(text)
        return np.stack([self._cache[t] for t in texts])

    def best_sentence(
        self, claim: str, text: str
    ) -> tuple[float, int, list[tuple[str, tuple[int, int]]]]:
        """Highest claim-sentence cosine in ``text``, its index, and the sentences."""
        sentences = sentences_with_spans(text)
        if not sentences or not claim.strip():
            return 0.0, -1, sentences
        vectors = self._embed([claim] + [s for s, _ in sentences])
        similarities = vectors[1:] @ vectors[0]
        best = int(np.argmax(similarities))
        return float(similarities[best]), best, sentences

    @staticmethod
    def _quote(
        claim: str, cited_text: str, alternatives: list[str] | None, contradiction: bool
    ) -> SupportResult | None:
        """The verdict for a claim that quotes a sentence of the cited text, if it does."""
        if contradiction:
            return None
        sentences = sentences_with_spans(cited_text)
        index = quoted_sentence(claim, sentences)
        if index < 0:
            return None
        sentence, span = sentences[index]
        if any(_folded(sentence) in _folded(text) for text in alternatives or []):
            return None
        claim_keys = key_tokens(claim)
        overlap = len(claim_keys & key_tokens(cited_text)) / len(claim_keys) if claim_keys else None
        return SupportResult(
            Support.SUPPORTED, 1.0, sentence, span, 1.0, overlap, False, None, quoted=True
        )

    def check(
        self, claim: str, cited_text: str, alternatives: list[str] | None = None
    ) -> SupportResult:
        """The verdict for ``claim`` citing ``cited_text``.

        ``alternatives`` are the other docs supplied to the RCA: when one of them supports the
        claim clearly better, the citation is a misattribution (e.g. a payment-timeout claim
        citing the checkout-crash doc).
        """
        claim_codes, text_codes = error_codes(claim), error_codes(cited_text)
        contradiction = bool(claim_codes and text_codes and not claim_codes & text_codes)
        quote = self._quote(claim, cited_text, alternatives, contradiction)
        if quote is not None:
            return quote
        semantic, best, sentences = self.best_sentence(claim, cited_text)
        if best < 0:
            return SupportResult(Support.UNSUPPORTED, 0.0, "", (0, 0), 0.0, None, False)
        margin = None
        if alternatives:
            margin = semantic - max(self.best_sentence(claim, text)[0] for text in alternatives)
        claim_keys = key_tokens(claim)
        text_keys = key_tokens(cited_text)
        overlap = len(claim_keys & text_keys) / len(claim_keys) if claim_keys else None
        score = semantic if overlap is None else SEMANTIC_WEIGHT * semantic + KEY_WEIGHT * overlap
        misattributed = margin is not None and margin < MISATTRIBUTION_MARGIN
        if contradiction or misattributed:
            score = min(score, WEAK_THRESHOLD - 0.01)
        ahead = margin is None or margin >= SUPPORTED_MARGIN
        if score >= SUPPORTED_THRESHOLD and ahead:
            support = Support.SUPPORTED
        elif score >= WEAK_THRESHOLD:
            support = Support.WEAK
        else:
            support = Support.UNSUPPORTED
        sentence, span = sentences[best]
        return SupportResult(
            support, round(score, 4), sentence, span, semantic, overlap, contradiction, margin
        )
