"""Shared test fakes that implement the project's real interfaces (fakes over mocks).

- ``ScriptedChatModel``: a langchain-core chat model replying from a script, in order; a step
  can be a reply, a message or an exception to raise, and every call can be delayed (awaited,
  so a timeout cancels it at once). It records the messages of every call.
- ``HashEmbedder``: a deterministic ``Embedder`` (hashed bag of words, 384 dims, unit length):
  texts sharing words get similar vectors, with no model file and no network.
- ``StaticRetriever``: a ``Retriever`` returning the same docs for every query.
- ``ChatServer``: a real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions and
  Ollama chat APIs, for provider tests without a model.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field
from tests.helpers import LoopbackServer

from app.rag.embedding import Vectors
from app.rag.retrieve import RankedDoc, Retrieval

Step = str | BaseMessage | BaseException


class ScriptExhausted(AssertionError):
    """The model was called more often than its script has steps."""


class ScriptedChatModel(FakeMessagesListChatModel):
    """Replies from ``script`` in order; records every call's messages in ``calls``.

    Steps: a ``str`` becomes an ``AIMessage``; a ``BaseMessage`` is returned as is; an exception
    instance is raised. ``sleep`` (seconds) delays every call before its step is taken; in async
    code it is an ``asyncio.sleep``, so ``asyncio.wait_for`` cancels it immediately. Unlike the
    parent class the script does not cycle: one call too many raises ``ScriptExhausted``.

    Example:
        ``ScriptedChatModel(script=["not json", VALID_JSON])`` answers an invalid reply, then a
        valid one; ``ScriptedChatModel(script=[ConnectionError("refused")])`` fails.
    """

    responses: list[BaseMessage] = Field(default_factory=list)
    script: list[Step] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    provider: str = "scripted"
    model_name: str = "scripted-model"

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = self.provider
        params["ls_model_name"] = self.model_name
        return params

    def _next(self, messages: list[BaseMessage]) -> ChatResult:
        self.calls.append(list(messages))
        if self.i >= len(self.script):
            raise ScriptExhausted(f"call {self.i + 1} but the script has {len(self.script)} steps")
        step = self.script[self.i]
        self.i += 1
        if isinstance(step, BaseException):
            raise step
        message = step if isinstance(step, BaseMessage) else AIMessage(content=step)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.sleep:
            time.sleep(self.sleep)
        return self._next(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.sleep:
            await asyncio.sleep(self.sleep)
        return self._next(messages)

    @property
    def prompts(self) -> list[str]:
        """Each call's messages joined into one text, for asserting what the model saw."""
        return ["\n".join(str(m.text) for m in call) for call in self.calls]


_WORD_RE = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic ``Embedder``: signed feature hashing of lower-cased words.

    Same text, same vector, in every process (blake2b, not the salted ``hash``). Vectors are
    unit length; a text without words maps to a fixed unit vector.
    """

    model_id = "hash-embedder-384"

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions

    def _vector(self, text: str) -> Vectors:
        vector = np.zeros(self.dimensions, dtype=np.float32)
        for word in _WORD_RE.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimensions
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return (vector / norm).astype(np.float32)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """One unit row per text, in input order."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> Vectors:
        """A 1-D unit vector."""
        return self._vector(text)

    def count_tokens(self, text: str) -> int:
        """Words plus the two special tokens a BERT-style model adds."""
        return len(_WORD_RE.findall(text)) + 2


class CountingEmbedder(HashEmbedder):
    """A ``HashEmbedder`` that counts the documents it embeds (to check caching)."""

    def __init__(self) -> None:
        super().__init__()
        self.documents_embedded = 0

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.documents_embedded += len(texts)
        return super().embed_documents(texts)


def ranked_doc(
    doc_id: str,
    text: str,
    metadata: dict[str, Any] | None = None,
    *,
    similarity: float = 0.8,
    rank: int = 1,
    collection: str = "test",
) -> RankedDoc:
    """A ``RankedDoc`` as dense retrieval would return it."""
    return RankedDoc(
        id=doc_id,
        text=text,
        metadata=dict(metadata or {}),
        collection=collection,
        dense_score=similarity,
        dense_rank=rank,
        fused_score=similarity,
    )


class StaticRetriever:
    """A ``Retriever`` that returns the same docs for every query and records the queries."""

    def __init__(self, docs: list[RankedDoc], *, low_confidence: bool | None = None) -> None:
        self.docs = docs
        self.low_confidence = (not docs) if low_confidence is None else low_confidence
        self.queries: list[str] = []

    def retrieve(self, query: str, limit: int) -> Retrieval:
        """The first ``limit`` docs, whatever the query."""
        self.queries.append(query)
        return Retrieval(
            query=query,
            docs=self.docs[:limit],
            low_confidence=self.low_confidence,
            queries=[query],
        )


class ChatServer(LoopbackServer):
    """A real HTTP server on 127.0.0.1 (a free port) that answers like a chat-model server.

    It speaks OpenAI's ``POST /v1/chat/completions`` (what vLLM, llama.cpp server and LM Studio
    serve) and Ollama's ``POST /api/chat``, replying with ``reply`` as the assistant's content.
    ``status`` other than 200 answers an error instead; ``delay`` holds each answer back (the
    wait ends early when the server stops). Every request is recorded in ``requests`` as
    ``{"path", "headers", "body"}``. Use it as a context manager.
    """

    def __init__(self, reply: str = "", *, status: int = 200, delay: float = 0.0) -> None:
        self.reply = reply
        self.status = status
        self.delay = delay
        super().__init__()

    def answer(self, path: str, body: Any, index: int) -> tuple[int, str, bytes] | None:
        """The chat reply (or the scripted error) after ``delay``; nothing once stopping."""
        if self.delay and self.stopping.wait(self.delay):
            return None
        return self._answer(path, body)

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if self.status != 200:
            error = {"error": {"message": "scripted failure", "type": "server_error"}}
            return self.status, "application/json", json.dumps(error).encode()
        model = body.get("model", "")
        if path.endswith("/api/chat"):
            done = {
                "model": model,
                "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": self.reply},
                "done": True,
                "done_reason": "stop",
            }
            return 200, "application/x-ndjson", (json.dumps(done) + "\n").encode()
        completion = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, "application/json", json.dumps(completion).encode()
