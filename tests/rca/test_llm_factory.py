"""``RCA_LLM`` selects the generator and the chat model."""

from __future__ import annotations

import sys

import pytest
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rca.extractive import ExtractiveGenerator
from app.rca.factory import build_chat_model, build_generator, parse_llm_setting
from app.rca.llm import LlmGenerator


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_extractive_is_the_default_and_has_no_chat_model() -> None:
    assert isinstance(build_generator(settings()), ExtractiveGenerator)
    assert build_chat_model(settings()) is None
    assert parse_llm_setting(" Extractive ") is None


def test_openai_model_is_configured_for_a_compatible_server() -> None:
    s = settings(
        llm="openai:qwen2.5:7b",
        llm_base_url="http://127.0.0.1:8080/v1",
        llm_timeout_seconds=12.5,
        llm_temperature=0.1,
    )

    chat = build_chat_model(s)
    generator = build_generator(s)

    assert isinstance(chat, ChatOpenAI)
    assert chat.model_name == "qwen2.5:7b"  # only the first colon separates the provider
    assert chat.openai_api_base == "http://127.0.0.1:8080/v1"
    assert chat.max_retries == 0
    assert chat.request_timeout == 12.5
    assert chat.temperature == 0.1
    # No key configured for a local server: a placeholder, never an environment lookup.
    assert isinstance(chat.openai_api_key, SecretStr)
    assert chat.openai_api_key.get_secret_value() == "not-needed"
    assert isinstance(generator, LlmGenerator)
    assert generator.name == "llm:openai/qwen2.5:7b"
    assert generator.timeout_seconds == 12.5


def test_openai_key_is_passed_through() -> None:
    chat = build_chat_model(
        settings(llm="openai:m", llm_base_url="http://127.0.0.1:1/v1", llm_api_key="sk-1")
    )
    assert isinstance(chat, ChatOpenAI)
    assert isinstance(chat.openai_api_key, SecretStr)
    assert chat.openai_api_key.get_secret_value() == "sk-1"


def test_ollama_model_is_configured() -> None:
    chat_ollama = pytest.importorskip("langchain_ollama").ChatOllama
    s = settings(
        llm="ollama:llama3.2", llm_base_url="http://127.0.0.1:11434", llm_timeout_seconds=7
    )

    chat = build_chat_model(s)

    assert isinstance(chat, chat_ollama)
    assert chat.model == "llama3.2"
    assert chat.base_url == "http://127.0.0.1:11434"
    assert chat.format == "json"
    assert chat.client_kwargs == {"timeout": 7}
    assert build_generator(s).name == "llm:ollama/llama3.2"


def test_missing_ollama_extra_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_ollama", None)  # makes the import fail

    with pytest.raises(ConfigurationError, match=r"incident-rca\[ollama\]"):
        build_generator(settings(llm="ollama:llama3.2"))


@pytest.mark.parametrize("value", ["gpt-4o", "openai:", "anthropic:claude", ":m", "llm"])
def test_unknown_value_is_a_configuration_error(value: str) -> None:
    with pytest.raises(ConfigurationError, match="unknown RCA_LLM value") as caught:
        build_generator(settings(llm=value))
    assert "openai:<model>" in caught.value.message
