from collections.abc import Iterator

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from tests.fakes import ScriptedChatModel

from app.core.config import Settings
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.knowledge import KnowledgeBase
from app.rag.rewrite import LlmQueryRewriter, build_query_rewriter, parse_variants


@pytest.fixture
def rewriters() -> Iterator[list[LlmQueryRewriter]]:
    made: list[LlmQueryRewriter] = []
    yield made
    for rewriter in made:
        rewriter.close()


def make(rewriters: list[LlmQueryRewriter], model: object, **kwargs: float) -> LlmQueryRewriter:
    rewriter = LlmQueryRewriter(model, **kwargs)  # type: ignore[arg-type]
    rewriters.append(rewriter)
    return rewriter


def test_rewrite_and_paraphrases_follow_the_original(rewriters: list[LlmQueryRewriter]) -> None:
    reply = "payment provider timeout at checkout\n1. card payments hang\n- PAY-408 read timeouts\n"
    model = GenericFakeChatModel(messages=iter([AIMessage(content=reply)]))
    expansion = make(rewriters, model).expand("payments slow")
    assert expansion.queries == [
        "payments slow",
        "payment provider timeout at checkout",
        "card payments hang",
        "PAY-408 read timeouts",
    ]
    assert expansion.notes == []


def test_at_most_three_variants_and_no_duplicates() -> None:
    reply = 'Q\nA\na\n  \n"B"\nC\nD\nq'
    assert parse_variants(reply, "q", 3) == ["A", "B", "C"]


def test_timeout_fails_open(rewriters: list[LlmQueryRewriter]) -> None:
    model = ScriptedChatModel(script=["too late"], sleep=1.0)
    expansion = make(rewriters, model, timeout_seconds=0.05).expand("PAY-408")
    assert expansion.queries == ["PAY-408"]
    assert "timed out" in expansion.notes[0]


def test_error_fails_open(rewriters: list[LlmQueryRewriter]) -> None:
    model = ScriptedChatModel(script=[ConnectionError("refused")])
    expansion = make(rewriters, model).expand("PAY-408")
    assert expansion.queries == ["PAY-408"]
    assert "failed" in expansion.notes[0]


@pytest.mark.parametrize("reply", ["", "   \n\n", "PAY-408"])
def test_empty_rewrite_fails_open(rewriters: list[LlmQueryRewriter], reply: str) -> None:
    model = ScriptedChatModel(script=[reply])
    expansion = make(rewriters, model).expand("PAY-408")
    assert expansion.queries == ["PAY-408"]
    assert "empty" in expansion.notes[0]


def test_engine_fuses_every_query(
    knowledge: KnowledgeBase, rewriters: list[LlmQueryRewriter]
) -> None:
    model = ScriptedChatModel(script=["card payments at the tills get 502 bad gateway"])
    rewriter = make(rewriters, model)
    engine = RetrievalEngine(knowledge.store, EngineConfig(), rewriter=rewriter)
    try:
        result = engine.retrieve("tills cannot take cards", 3)
    finally:
        engine.close()
    assert result.queries == [
        "tills cannot take cards",
        "card payments at the tills get 502 bad gateway",
    ]
    assert result.docs[0].metadata["error_code"] == "POS-502-CARD"
    assert model.prompts and "tills cannot take cards" in model.prompts[0]


def test_engine_notes_a_failed_rewrite(
    knowledge: KnowledgeBase, rewriters: list[LlmQueryRewriter]
) -> None:
    rewriter = make(rewriters, ScriptedChatModel(script=[RuntimeError("boom")]))
    engine = RetrievalEngine(knowledge.store, EngineConfig(), rewriter=rewriter)
    try:
        result = engine.retrieve("PAY-408 payment timeout", 3)
    finally:
        engine.close()
    assert result.queries == ["PAY-408 payment timeout"]
    assert any("rewrite failed" in n for n in result.notes)
    assert result.docs[0].metadata["error_code"] == "PAY-408"


def test_build_query_rewriter_from_settings() -> None:
    model = ScriptedChatModel(script=[])
    assert build_query_rewriter(Settings(_env_file=None), None) is None  # type: ignore[call-arg]
    off = Settings(rewrite_max_variants=0, _env_file=None)  # type: ignore[call-arg]
    assert build_query_rewriter(off, model) is None
    settings = Settings(rewrite_timeout_seconds=1.5, rewrite_max_variants=2, _env_file=None)  # type: ignore[call-arg]
    rewriter = build_query_rewriter(settings, model)
    assert rewriter is not None
    assert (rewriter.timeout_seconds, rewriter.max_variants) == (1.5, 2)
    rewriter.close()
