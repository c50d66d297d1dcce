from collections.abc import Iterator

import pytest
from pydantic import SecretStr
from tests.helpers import free_port
from tests.rag.helpers import FakeReranker, Reply, RerankServer, code_of, tei_scores

from app.core.config import Settings
from app.core.errors import UpstreamError
from app.rag.engine import RetrievalEngine
from app.rag.engine_config import EngineConfig
from app.rag.knowledge import KnowledgeBase
from app.rag.rerank import HttpReranker, RerankScore, build_reranker


@pytest.fixture
def rerankers() -> Iterator[list[HttpReranker]]:
    made: list[HttpReranker] = []
    yield made
    for reranker in made:
        reranker.close()


def tei(server: RerankServer, made: list[HttpReranker], **kwargs: object) -> HttpReranker:
    reranker = HttpReranker(server.base_url, "tei", timeout_seconds=2.0, **kwargs)  # type: ignore[arg-type]
    made.append(reranker)
    return reranker


def by_index(scores: list[RerankScore]) -> dict[int, float]:
    return {s.index: s.score for s in scores}


def test_tei_request_and_score_mapping(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [Reply(body=[{"index": 1, "score": 0.9}, {"index": 0, "score": 0.2}])]
    scores = tei(rerank_server, rerankers).rerank("q", ["first", "second"])
    assert by_index(scores) == {0: 0.2, 1: 0.9}
    request = rerank_server.requests[0]
    assert request["path"] == "/rerank"
    assert request["body"] == {"query": "q", "texts": ["first", "second"], "truncate": True}


def test_cohere_request_shape_and_auth(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [
        Reply(body={"results": [{"index": 0, "relevance_score": 0.7}], "id": "x"})
    ]
    reranker = HttpReranker(
        rerank_server.base_url + "/",
        "cohere",
        model="rerank-v3.5",
        api_key=SecretStr("sekret"),
        timeout_seconds=2.0,
    )
    rerankers.append(reranker)
    assert by_index(reranker.rerank("q", ["a", "b"])) == {0: 0.7}
    request = rerank_server.requests[0]
    assert request["path"] == "/v1/rerank"
    assert request["body"] == {
        "model": "rerank-v3.5",
        "query": "q",
        "documents": ["a", "b"],
        "top_n": 2,
    }
    assert request["headers"]["authorization"] == "Bearer sekret"


def test_caps_on_documents_and_characters(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [Reply(body=tei_scores([0.1, 0.2, 0.3]))]
    texts = ["x" * 50, "y" * 5, "z" * 50, "never sent"]
    scores = tei(rerank_server, rerankers, max_docs=3, max_chars=10).rerank("q", texts)
    assert rerank_server.requests[0]["body"]["texts"] == ["x" * 10, "y" * 5, "z" * 10]
    assert set(by_index(scores)) == {0, 1, 2}


def test_out_of_range_and_malformed_entries_are_dropped(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [
        Reply(
            body=[
                {"index": 0, "score": 0.4},
                {"index": 2, "score": 0.99},
                {"index": -1, "score": 0.99},
                {"index": "1", "score": 0.5},
                {"index": 1, "score": "high"},
                {"index": True, "score": 0.5},
                "junk",
            ]
        )
    ]
    assert by_index(tei(rerank_server, rerankers).rerank("q", ["a", "b"])) == {0: 0.4}


def test_retry_once_on_5xx(rerank_server: RerankServer, rerankers: list[HttpReranker]) -> None:
    rerank_server.script = [Reply(status=503, body={"error": "busy"}), Reply(body=tei_scores([1]))]
    assert by_index(tei(rerank_server, rerankers).rerank("q", ["a"])) == {0: 1}
    assert len(rerank_server.requests) == 2


def test_retry_once_on_timeout(rerank_server: RerankServer, rerankers: list[HttpReranker]) -> None:
    rerank_server.script = [Reply(delay=5.0, body=[]), Reply(body=tei_scores([0.3]))]
    reranker = HttpReranker(rerank_server.base_url, "tei", timeout_seconds=0.2)
    rerankers.append(reranker)
    assert by_index(reranker.rerank("q", ["a"])) == {0: 0.3}
    assert len(rerank_server.requests) == 2


def test_gives_up_after_one_retry(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [Reply(status=502, body={})]
    with pytest.raises(UpstreamError, match="unavailable"):
        tei(rerank_server, rerankers).rerank("q", ["a"])
    assert len(rerank_server.requests) == 2


def test_no_retry_on_4xx_or_bad_body(
    rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [Reply(status=400, body={"error": "bad"})]
    with pytest.raises(UpstreamError, match="HTTP 400"):
        tei(rerank_server, rerankers).rerank("q", ["a"])
    assert len(rerank_server.requests) == 1
    rerank_server.script = [Reply(status=200, raw=b"not json")] * 2
    with pytest.raises(UpstreamError, match="invalid JSON"):
        tei(rerank_server, rerankers).rerank("q", ["a"])
    rerank_server.script = [Reply(body={"results": []})] * 3
    with pytest.raises(UpstreamError, match="unexpected format"):
        tei(rerank_server, rerankers).rerank("q", ["a"])


def test_connection_refused_is_an_upstream_error(rerankers: list[HttpReranker]) -> None:
    reranker = HttpReranker(f"http://127.0.0.1:{free_port()}", "tei", timeout_seconds=1.0)
    rerankers.append(reranker)
    with pytest.raises(UpstreamError):
        reranker.rerank("q", ["a"])


def test_build_reranker_from_settings() -> None:
    assert build_reranker(Settings(_env_file=None)) is None  # type: ignore[call-arg]
    settings = Settings(
        rerank_url="http://127.0.0.1:1", rerank_kind="cohere", rerank_max_docs=7, _env_file=None
    )  # type: ignore[call-arg]
    reranker = build_reranker(settings)
    assert reranker is not None
    assert (reranker.kind, reranker.max_docs, reranker.max_chars) == ("cohere", 7, 1000)
    reranker.close()


# -- the engine with a reranker ---------------------------------------------------------------


def test_engine_reorders_by_rerank_and_applies_threshold(knowledge: KnowledgeBase) -> None:
    reranker = FakeReranker(keyword="POS-502-CARD")
    engine = RetrievalEngine(knowledge.store, EngineConfig(score_floor=0.0), reranker=reranker)
    result = engine.retrieve("payment failures at checkout", 10)
    assert [code_of(d) for d in result.docs] == ["POS-502-CARD"]
    assert result.docs[0].rerank_score == 0.9
    assert reranker.calls[0][0] == "payment failures at checkout"
    assert not result.rerank_fallback and not result.low_confidence


def test_engine_low_confidence_when_rerank_keeps_nothing(knowledge: KnowledgeBase) -> None:
    engine = RetrievalEngine(knowledge.store, EngineConfig(), reranker=FakeReranker("absent"))
    result = engine.retrieve("PAY-408 payment timeout", 5)
    assert result.docs == [] and result.low_confidence


def test_engine_falls_back_to_fusion_order(knowledge: KnowledgeBase) -> None:
    plain = RetrievalEngine(knowledge.store, EngineConfig())
    failing = RetrievalEngine(knowledge.store, EngineConfig(), reranker=FakeReranker(fail=True))
    expected = plain.retrieve("PAY-408 payment timeout", 5)
    result = failing.retrieve("PAY-408 payment timeout", 5)
    assert [d.id for d in result.docs] == [d.id for d in expected.docs]
    assert result.rerank_fallback
    assert any("fusion order" in n for n in result.notes)
    assert all(d.rerank_score is None for d in result.docs)


def test_engine_over_a_real_rerank_server(
    knowledge: KnowledgeBase, rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    # The server prefers whatever the engine sent last; only two texts fit the cap.
    rerank_server.script = [Reply(body=tei_scores([0.6, 0.95]))]
    reranker = tei(rerank_server, rerankers, max_docs=2, max_chars=100)
    engine = RetrievalEngine(knowledge.store, EngineConfig(score_floor=0.0), reranker=reranker)
    fused = RetrievalEngine(knowledge.store, EngineConfig(score_floor=0.0)).retrieve(
        "PAY-408 payment timeout", 10
    )
    result = engine.retrieve("PAY-408 payment timeout", 10)
    assert [d.id for d in result.docs] == [fused.docs[1].id, fused.docs[0].id]
    assert [d.rerank_score for d in result.docs] == [0.95, 0.6]
    # Full texts come back although only 100 characters of each were sent.
    assert result.docs[0].text == fused.docs[1].text
    assert all(len(t) <= 100 for t in rerank_server.requests[0]["body"]["texts"])


def test_engine_falls_back_when_the_server_is_down(
    knowledge: KnowledgeBase, rerank_server: RerankServer, rerankers: list[HttpReranker]
) -> None:
    rerank_server.script = [Reply(status=500, body={})]
    engine = RetrievalEngine(
        knowledge.store, EngineConfig(), reranker=tei(rerank_server, rerankers)
    )
    result = engine.retrieve("PAY-408 payment timeout", 3)
    assert result.rerank_fallback and not result.low_confidence
    assert code_of(result.docs[0]) == "PAY-408"
    assert len(rerank_server.requests) == 2
