"""The LLM generator with a scripted chat model: parsing, retry, fail-open, band and outcome."""

from __future__ import annotations

import json

import pytest
from tests.fakes import ScriptedChatModel
from tests.rca.helpers import CHECKOUT_DOC_ID, FOREIGN_DOC_ID, draft_reply, make_input

from app.core.config import Settings
from app.rca.llm import LlmGenerator
from app.rca.prompts import PROMPT_VERSION, RETRIEVAL_LOW
from app.rca.schema import ConfidenceBand, Outcome

LABEL = "llm:scripted/scripted-model"


def generator(*script: object, sleep: float | None = None, timeout: float = 30.0) -> LlmGenerator:
    model = ScriptedChatModel(script=list(script), sleep=sleep)
    return LlmGenerator(model, timeout_seconds=timeout)


def chat(gen: LlmGenerator) -> ScriptedChatModel:
    assert isinstance(gen.model, ScriptedChatModel)
    return gen.model


async def test_valid_output_is_the_draft_with_computed_band_and_provenance() -> None:
    gen = generator(draft_reply())

    rca = await gen.generate(make_input())

    assert gen.name == LABEL
    assert rca.summary == "Checkout crashed dividing by zero."
    assert rca.cited_ids() == [CHECKOUT_DOC_ID, "incident:message"]
    assert rca.outcome is Outcome.ANALYSIS
    # The band is the diagnosis' (exception, file and path confirmed by the incident), never
    # the model's self-report (see test_band_follows_the_diagnosis_not_the_model).
    assert rca.confidence is ConfidenceBand.HIGH
    assert rca.hypotheses[0].confidence is ConfidenceBand.HIGH
    assert rca.provenance.generator == LABEL
    assert rca.provenance.prompt_version == PROMPT_VERSION
    assert rca.provenance.knowledge_version == "kb-test-1"
    assert rca.provenance.fallback_reason is None
    assert len(chat(gen).calls) == 1


async def test_reply_in_fences_after_reasoning_and_prose_is_parsed() -> None:
    reply = (
        "<think>Maybe {not this} one.</think>\nSure! Here is the RCA:\n```json\n"
        + draft_reply()
        + "\n```\nHope that helps {smile}."
    )
    rca = await generator(reply).generate(make_input())

    assert rca.provenance.generator == LABEL
    assert rca.cited_ids() == [CHECKOUT_DOC_ID, "incident:message"]


async def test_invalid_then_valid_retries_once_with_the_error() -> None:
    gen = generator('{"hypotheses": []}', draft_reply())

    rca = await gen.generate(make_input())

    assert rca.provenance.generator == LABEL
    assert rca.provenance.fallback_reason is None
    first, second = chat(gen).calls
    assert second[: len(first)] == first
    assert second[-2].text == '{"hypotheses": []}'
    assert "summary: Field required" in second[-1].text


async def test_invalid_twice_fails_open_to_extractive_with_the_reason() -> None:
    gen = generator("I think it is the database.", '{"summary": ""}')

    rca = await gen.generate(make_input())

    assert len(chat(gen).calls) == 2
    assert rca.provenance.generator == "extractive"
    reason = rca.provenance.fallback_reason or ""
    assert reason.startswith(f"{LABEL}: invalid output twice: ")
    assert "summary" in reason
    # The extractive draft itself: the leading family's documented cause, band from the diagnosis.
    assert rca.hypotheses[0].error_code == "CO-500"
    assert rca.confidence is ConfidenceBand.HIGH
    assert rca.provenance.prompt_version == PROMPT_VERSION


async def test_timeout_fails_open() -> None:
    timeout = Settings(llm_timeout_seconds=0.2, _env_file=None).llm_timeout_seconds
    gen = generator(draft_reply(), sleep=2.0, timeout=timeout)

    rca = await gen.generate(make_input())

    assert rca.provenance.generator == "extractive"
    assert rca.provenance.fallback_reason == f"{LABEL}: timeout after 0.2s"


async def test_provider_exception_fails_open() -> None:
    gen = generator(ConnectionError("connection refused"))

    rca = await gen.generate(make_input())

    assert rca.provenance.generator == "extractive"
    assert rca.provenance.fallback_reason == f"{LABEL}: provider error: ConnectionError"
    assert rca.outcome is Outcome.ANALYSIS


async def test_provider_exception_on_the_retry_fails_open() -> None:
    gen = generator("not json", RuntimeError("boom"))

    rca = await gen.generate(make_input())

    assert rca.provenance.fallback_reason == f"{LABEL}: provider error: RuntimeError"


async def test_low_confidence_abstains_whatever_the_model_says() -> None:
    gen = generator(draft_reply(summary="The discount code divides by zero."))

    rca = await gen.generate(make_input(low_confidence=True))

    assert RETRIEVAL_LOW in chat(gen).prompts[0]
    assert rca.outcome is Outcome.INSUFFICIENT_EVIDENCE
    assert rca.confidence is ConfidenceBand.INSUFFICIENT
    assert {h.confidence for h in rca.hypotheses} == {ConfidenceBand.INSUFFICIENT}
    assert rca.summary.startswith("Insufficient evidence: ")
    assert rca.provenance.generator == LABEL


async def test_no_docs_abstains() -> None:
    reply = draft_reply("incident:message", summary="Insufficient evidence: nothing matched.")
    rca = await generator(reply).generate(make_input(docs=[], low_confidence=True))

    assert rca.outcome is Outcome.INSUFFICIENT_EVIDENCE
    assert rca.summary == "Insufficient evidence: nothing matched."


async def test_alternatives_are_at_most_low() -> None:
    reply = json.loads(draft_reply())
    reply["hypotheses"].append(json.loads(_alternative()))
    rca = await generator(json.dumps(reply)).generate(make_input())

    assert [h.confidence for h in rca.hypotheses] == [ConfidenceBand.HIGH, ConfidenceBand.LOW]


async def test_a_first_hypothesis_other_than_the_diagnosis_leader_is_at_most_low() -> None:
    reply = draft_reply().replace('"hypotheses": [', '"hypotheses": [' + _alternative() + ", ", 1)
    rca = await generator(reply).generate(make_input())

    assert rca.hypotheses[0].error_code == "CH-502"
    assert rca.confidence is ConfidenceBand.LOW
    # The failing requests went to /checkout, the web shop's endpoint: CH-502 is contradicted.
    assert [f.kind for f in rca.hypotheses[0].flags] == ["contradicted", "no_incident_evidence"]


async def test_unsupplied_ids_are_returned_unfiltered_by_the_generator() -> None:
    rca = await generator(draft_reply(CHECKOUT_DOC_ID, FOREIGN_DOC_ID)).generate(make_input())

    # Filtering is the whitelist node's job (see test_llm_whitelist.py), not the generator's.
    assert FOREIGN_DOC_ID in rca.cited_ids()


async def test_the_model_is_used_as_is_and_labelled_from_its_own_params() -> None:
    model = ScriptedChatModel(script=[draft_reply()], provider="vllm", model_name="qwen2.5-7b")
    assert LlmGenerator(model).name == "llm:vllm/qwen2.5-7b"
    assert LlmGenerator(model, provider="openai", model_name="m").name == "llm:openai/m"


def _alternative() -> str:
    return (
        '{"statement": "Alternative: gateway", "error_code": "CH-502", "confidence": "high",'
        ' "claims": []}'
    )


@pytest.mark.parametrize("reply", ["", "[]", "null", '{"summary": 3}', "```json\n{\n```"])
async def test_any_invalid_reply_twice_fails_open(reply: str) -> None:
    rca = await generator(reply, reply).generate(make_input())

    assert rca.provenance.generator == "extractive"
    assert (rca.provenance.fallback_reason or "").startswith(f"{LABEL}: invalid output twice")


async def test_band_follows_the_diagnosis_not_the_model() -> None:
    # Only the prose speaks: nothing confirms the family, so the band is low whatever the
    # model claims ("high" in the reply).
    incident = {"message": "something is off with the shop"}
    rca = await generator(draft_reply()).generate(make_input(incident))
    assert rca.outcome is Outcome.ANALYSIS
    assert rca.confidence is ConfidenceBand.LOW


async def test_a_hypothesis_the_diagnosis_contradicts_is_flagged() -> None:
    # The incident shows a read timeout; the model answers the division-by-zero family anyway.
    incident = {
        "message": "payments hang",
        "logs": ["ERROR payment client: requests.exceptions.ReadTimeout after 30s"],
    }
    rca = await generator(draft_reply()).generate(make_input(incident))
    kinds = [f.kind for f in rca.hypotheses[0].flags]
    assert "contradicted" in kinds
    assert rca.hypotheses[0].confidence is ConfidenceBand.LOW


async def test_a_hypothesis_citing_nothing_from_the_incident_is_flagged() -> None:
    rca = await generator(draft_reply(CHECKOUT_DOC_ID)).generate(make_input())
    assert [f.kind for f in rca.hypotheses[0].flags] == ["no_incident_evidence"]
    assert rca.confidence is ConfidenceBand.LOW
    cited = await generator(draft_reply(CHECKOUT_DOC_ID, "incident:stack:3")).generate(make_input())
    assert cited.hypotheses[0].flags == []
