"""Real provider clients (langchain-openai, langchain-ollama) against a real local HTTP server."""

from __future__ import annotations

import json

import pytest
from tests.fakes import ChatServer
from tests.rca.helpers import CHECKOUT_DOC_ID, CHILLER_DOC_ID, draft_reply, make_input

from app.core.config import Settings
from app.rca.factory import build_generator
from app.rca.llm import LlmGenerator
from app.rca.schema import Outcome


def settings_for(llm: str, base_url: str, timeout: float = 10.0) -> Settings:
    return Settings(
        llm=llm,
        llm_base_url=base_url,
        llm_api_key="sk-test-key",
        llm_timeout_seconds=timeout,
        _env_file=None,
    )


def llm_generator(settings: Settings) -> LlmGenerator:
    generator = build_generator(settings)
    assert isinstance(generator, LlmGenerator)
    return generator


async def test_openai_compatible_server_writes_the_rca() -> None:
    with ChatServer(draft_reply()) as server:
        generator = llm_generator(
            settings_for("openai:qwen2.5-7b-instruct", f"{server.base_url}/v1")
        )
        rca = await generator.generate(make_input())

    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-test-key"
    body = request["body"]
    assert body["model"] == "qwen2.5-7b-instruct"
    assert body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    sent = json.dumps(body["messages"])
    assert CHECKOUT_DOC_ID in sent and CHILLER_DOC_ID in sent
    assert "tools" not in body
    assert rca.provenance.generator == "llm:openai/qwen2.5-7b-instruct"
    assert rca.provenance.fallback_reason is None
    assert rca.cited_ids() == [CHECKOUT_DOC_ID, "incident:message"]
    assert rca.outcome is Outcome.ANALYSIS


async def test_openai_compatible_server_error_fails_open() -> None:
    with ChatServer(status=500) as server:
        generator = llm_generator(settings_for("openai:m", f"{server.base_url}/v1"))
        rca = await generator.generate(make_input())

    assert len(server.requests) == 1  # the client does not retry on its own
    assert rca.provenance.generator == "extractive"
    reason = rca.provenance.fallback_reason or ""
    # The class name depends on the client library's version; the HTTP status does not.
    assert reason.startswith("llm:openai/m: provider error: ")
    assert reason.endswith("(HTTP 500)")


async def test_openai_compatible_slow_server_fails_open() -> None:
    with ChatServer(draft_reply(), delay=2.0) as server:
        generator = llm_generator(settings_for("openai:m", f"{server.base_url}/v1", timeout=0.2))
        rca = await generator.generate(make_input())

    assert rca.provenance.generator == "extractive"
    # Our deadline and the client's own read timeout are equal: whichever fires, it reads the same.
    assert rca.provenance.fallback_reason == "llm:openai/m: timeout after 0.2s"


async def test_openai_compatible_invalid_output_is_retried_then_fails_open() -> None:
    with ChatServer("The database is down, probably.") as server:
        generator = llm_generator(settings_for("openai:m", f"{server.base_url}/v1"))
        rca = await generator.generate(make_input())

    assert len(server.requests) == 2
    retry = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert "no JSON object" in retry[-1]["content"]
    assert (rca.provenance.fallback_reason or "").startswith("llm:openai/m: invalid output twice")


async def test_unreachable_server_fails_open() -> None:
    with ChatServer() as server:
        url = f"{server.base_url}/v1"
    generator = llm_generator(settings_for("openai:m", url))  # the server is gone

    rca = await generator.generate(make_input())

    reason = rca.provenance.fallback_reason or ""
    assert reason.startswith("llm:openai/m: provider error: ")
    assert "ConnectionError" in reason


async def test_ollama_server_writes_the_rca() -> None:
    pytest.importorskip("langchain_ollama")
    with ChatServer(draft_reply()) as server:
        generator = llm_generator(settings_for("ollama:llama3.2", server.base_url))
        rca = await generator.generate(make_input())

    (request,) = server.requests
    assert request["path"] == "/api/chat"
    assert request["body"]["model"] == "llama3.2"
    assert request["body"]["format"] == "json"
    assert CHECKOUT_DOC_ID in json.dumps(request["body"]["messages"])
    assert rca.provenance.generator == "llm:ollama/llama3.2"
    assert rca.provenance.fallback_reason is None


async def test_ollama_server_error_fails_open() -> None:
    pytest.importorskip("langchain_ollama")
    with ChatServer(status=500) as server:
        generator = llm_generator(settings_for("ollama:llama3.2", server.base_url))
        rca = await generator.generate(make_input())

    assert rca.provenance.generator == "extractive"
    reason = rca.provenance.fallback_reason or ""
    assert reason.startswith("llm:ollama/llama3.2: provider error: ")
    assert reason.endswith("(HTTP 500)")
