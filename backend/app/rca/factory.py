"""Choose the RCA generator and the chat model from settings (``RCA_LLM``).

Values of ``RCA_LLM``:

- ``extractive`` (default): no LLM at all.
- ``openai:<model>``: any OpenAI-compatible ``/v1/chat/completions`` server through
  langchain-openai's ``ChatOpenAI``, at ``RCA_LLM_BASE_URL`` (vLLM, llama.cpp server,
  LM Studio, OpenAI itself when unset) with ``RCA_LLM_API_KEY``. Needs the ``openai`` extra.
- ``ollama:<model>``: a local Ollama server through langchain-ollama's ``ChatOllama`` at
  ``RCA_LLM_BASE_URL`` (Ollama's default when unset). Needs the ``ollama`` extra.

Provider clients never retry on their own (we retry invalid output once ourselves and fail open
to the extractive generator on any other failure), and their timeout is ``RCA_LLM_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import importlib
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.rca.base import RcaGenerator
from app.rca.extractive import ExtractiveGenerator
from app.rca.llm import LlmGenerator

EXTRACTIVE = "extractive"
PROVIDERS = ("openai", "ollama")
#: Sent when no key is configured but a base URL is: local servers ignore it, the client needs one.
PLACEHOLDER_API_KEY = "not-needed"


def parse_llm_setting(value: str) -> tuple[str, str] | None:
    """``None`` for ``extractive``; ``(provider, model)`` for ``<provider>:<model>``.

    Raises:
        ConfigurationError: The value names no known provider or no model.
    """
    value = value.strip()
    if value.lower() == EXTRACTIVE:
        return None
    provider, sep, model = value.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if not sep or provider not in PROVIDERS or not model:
        raise ConfigurationError(
            f"unknown RCA_LLM value '{value}': use 'extractive', 'openai:<model>' or "
            "'ollama:<model>'"
        )
    return provider, model


def _import_extra(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigurationError(
            f"RCA_LLM needs the optional '{extra}' dependencies: "
            f"pip install 'incident-rca[{extra}]'"
        ) from exc


def _openai_model(settings: Settings, model: str) -> BaseChatModel:
    chat_openai = _import_extra("langchain_openai", "openai").ChatOpenAI
    api_key = settings.llm_api_key
    if api_key is None and settings.llm_base_url:
        api_key = SecretStr(PLACEHOLDER_API_KEY)
    try:
        chat: BaseChatModel = chat_openai(
            model=model,
            base_url=settings.llm_base_url,
            api_key=api_key,
            temperature=settings.llm_temperature,
            timeout=settings.llm_timeout_seconds,
            max_retries=0,
        )
    except Exception as exc:  # the client validates its key and URL when it is built
        raise ConfigurationError(
            f"cannot configure the OpenAI-compatible model '{model}': set RCA_LLM_BASE_URL "
            "and RCA_LLM_API_KEY as the server requires"
        ) from exc
    return chat


def _ollama_model(settings: Settings, model: str) -> BaseChatModel:
    chat_ollama = _import_extra("langchain_ollama", "ollama").ChatOllama
    options: dict[str, Any] = {}
    if settings.llm_base_url:
        options["base_url"] = settings.llm_base_url
    chat: BaseChatModel = chat_ollama(
        model=model,
        temperature=settings.llm_temperature,
        # Ollama constrains decoding to valid JSON; the reply is still validated.
        format="json",
        client_kwargs={"timeout": settings.llm_timeout_seconds},
        **options,
    )
    return chat


def build_chat_model(settings: Settings) -> BaseChatModel | None:
    """The configured chat model, or ``None`` for ``RCA_LLM=extractive``.

    Also used by query rewriting, so one setting selects the model for the whole service.

    Raises:
        ConfigurationError: Unknown ``RCA_LLM`` value, missing optional extra, or a client
            that rejects its configuration.
    """
    parsed = parse_llm_setting(settings.llm)
    if parsed is None:
        return None
    provider, model = parsed
    if provider == "openai":
        return _openai_model(settings, model)
    return _ollama_model(settings, model)


def build_generator(settings: Settings) -> RcaGenerator:
    """``ExtractiveGenerator`` by default; an ``LlmGenerator`` when ``RCA_LLM`` names a model.

    Raises:
        ConfigurationError: As ``build_chat_model``.
    """
    parsed = parse_llm_setting(settings.llm)
    chat = build_chat_model(settings)
    if parsed is None or chat is None:
        return ExtractiveGenerator()
    provider, model = parsed
    return LlmGenerator(
        chat,
        timeout_seconds=settings.llm_timeout_seconds,
        provider=provider,
        model_name=model,
    )
