"""The LLM-backed RCA generator: any langchain-core chat model, JSON in the message content.

The model is asked for one JSON object shaped like ``RcaDraft`` (no tool calling: llama.cpp,
LM Studio and many vLLM setups lack it, plain content works everywhere). The reply is parsed
(reasoning ``<think>`` blocks and markdown fences stripped, the outermost JSON object taken)
and validated with pydantic. An invalid reply gets one retry with a short description of what
was wrong.

The run never fails because of the LLM. On a timeout, a provider error or a second invalid
reply the generator *fails open* to the extractive generator. Convention: a fallback draft is
the extractive draft unchanged (``provenance.generator == "extractive"``, since that is what
wrote it) with ``provenance.fallback_reason`` set to ``"<llm label>: <reason>"``, e.g.
``"llm:openai/qwen2.5-7b: timeout after 30s"`` (our deadline or the client's own),
``"llm:openai/x: provider error: OpenAIAPIError (HTTP 500)"`` (class name and status only;
the message and traceback go to the log) or ``"llm:ollama/llama3.2: invalid output twice:
summary: Field required"``. A draft the model did write has ``generator ==
"llm:<provider>/<model>"`` and no fallback reason.

The prompt carries the differential diagnosis (``<diagnosis>``: per candidate family the
confirmed, contradicted and missing signals with their evidence ids) and the draft is held to
it (``app.rca.flags``): a hypothesis the diagnosis contradicts, or one citing nothing from the
incident, is flagged to the reviewer. What the model says is never trusted for the confidence
band or the outcome: both come from the diagnosis (``app.rca.confidence.diagnosis_band``), and
unsupplied citations are removed later by the ``whitelist`` node.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from app.rca.base import EvidenceItem, RcaInput
from app.rca.diagnosis import Diagnosis
from app.rca.evidence import collected_text
from app.rca.explain import for_and_against
from app.rca.extractive import ExtractiveGenerator, diagnosis_of
from app.rca.flags import flag_hypotheses
from app.rca.prompts import (
    DIAGNOSIS_ABSTAIN,
    INSUFFICIENT_EVIDENCE,
    PROMPT_VERSION,
    RCA_REPAIR_PROMPT,
    RCA_SYSTEM_PROMPT,
    RCA_TASK_PROMPT,
    RETRIEVAL_LOW,
    RETRIEVAL_OK,
)
from app.rca.schema import ConfidenceBand, Outcome, Provenance, Rca, RcaDraft

logger = logging.getLogger(__name__)

#: Characters of one knowledge doc shown to the model.
MAX_DOC_CHARS = 4_000
#: Characters of one incident evidence item (a log line, a stack line, the message).
MAX_ITEM_CHARS = 1_000
#: Characters of all stack-trace items together, and of all log items together.
MAX_GROUP_CHARS = 12_000
#: Characters of the invalid reply echoed back on the retry, and of a recorded error.
MAX_ECHO_CHARS = 4_000
MAX_ERROR_CHARS = 300
#: Collected items shown to the model (in collection order: alert series, RED series, logs).
MAX_COLLECTED_ITEMS = 20
#: How many ``{`` positions are tried when looking for the JSON object in a reply.
MAX_JSON_STARTS = 50

# Look-alikes of our own delimiters inside untrusted text are defused so the text cannot close
# its block early and pose as instructions.
_DELIMITER_RE = re.compile(
    r"<(/?\s*(?:knowledge|doc|incident|item|notes|collected)\b[^<>]*)>", re.I
)
_THINK_RE = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
_INCIDENT_FIELDS = ("service", "error_code", "event")
#: Candidates and signals per candidate shown in ``<diagnosis>``.
MAX_DIAGNOSIS_CANDIDATES = 5
MAX_DIAGNOSIS_SIGNALS = 6


class InvalidOutput(ValueError):
    """The model's reply is not a valid ``RcaDraft`` JSON object."""


def defuse(text: str) -> str:
    """Untrusted text with any look-alike of the prompt's delimiters made inert."""
    return _DELIMITER_RE.sub(r"‹\1›", text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _format_docs(docs: list[dict[str, Any]]) -> str:
    if not docs:
        return "<knowledge>\n(no knowledge docs were retrieved)\n</knowledge>"
    blocks = [
        f'<doc id="{defuse(str(d["id"]))}">\n'
        f"{defuse(_clip(str(d.get('content', '')).strip(), MAX_DOC_CHARS))}\n</doc>"
        for d in docs
    ]
    return "<knowledge>\n" + "\n".join(blocks) + "\n</knowledge>"


def _tail_within(items: list[EvidenceItem], budget: int) -> list[EvidenceItem]:
    """The last items whose clipped texts fit ``budget``; where traces and logs end matters."""
    kept: list[EvidenceItem] = []
    used = 0
    for item in reversed(items):
        used += min(len(item.text), MAX_ITEM_CHARS)
        if used > budget and kept:
            break
        kept.append(item)
    return kept[::-1]


def select_incident_evidence(items: list[EvidenceItem]) -> tuple[list[EvidenceItem], int]:
    """The incident items shown to the model, in order, and how many were left out.

    The message is always shown; stack-trace and log items keep their tail within a budget
    each, because the innermost Python frame and the latest log lines come last.
    """
    message = [e for e in items if not e.id.startswith(("incident:stack:", "incident:log:"))]
    stack = _tail_within([e for e in items if e.id.startswith("incident:stack:")], MAX_GROUP_CHARS)
    logs = _tail_within([e for e in items if e.id.startswith("incident:log:")], MAX_GROUP_CHARS)
    shown = message + stack + logs
    return shown, len(items) - len(shown)


def _format_incident(incident: dict[str, Any], items: list[EvidenceItem], omitted: int) -> str:
    lines = ["<incident>"]
    for key in _INCIDENT_FIELDS:
        value = str(incident.get(key) or "").strip()
        if value:
            lines.append(f"{key} (context, not citable): {defuse(_clip(value, MAX_ITEM_CHARS))}")
    for item in items:
        text = defuse(_clip(item.text.strip(), MAX_ITEM_CHARS))
        lines.append(f'<item id="{item.id}">{text}</item>')
    if omitted:
        lines.append(f"({omitted} older stack or log lines omitted)")
    notes = [str(n).strip() for n in incident.get("reviewer_notes") or [] if str(n).strip()]
    if notes:
        lines.append("<notes>reviewer notes (context, not citable):")
        lines.extend(f"- {defuse(_clip(n, MAX_ITEM_CHARS))}" for n in notes)
        lines.append("</notes>")
    lines.append("</incident>")
    return "\n".join(lines)


def _format_collected(collected: list[dict[str, Any]]) -> str:
    """The collected items (untrusted: log lines are written by anyone) in their own block."""
    lines = ["<collected>"]
    for item in collected[:MAX_COLLECTED_ITEMS]:
        text = collected_text(item)
        if item.get("query"):
            text = f"{text}\nquery: {item['query']}"
        lines.append(
            f'<item id="{defuse(str(item["id"]))}" kind="{defuse(str(item.get("kind", "")))}">'
            f"{defuse(_clip(text.strip(), MAX_ITEM_CHARS))}</item>"
        )
    if len(collected) > MAX_COLLECTED_ITEMS:
        lines.append(f"({len(collected) - MAX_COLLECTED_ITEMS} more collected items omitted)")
    lines.append("</collected>")
    return "\n".join(lines)


def _format_diagnosis(diagnosis: Diagnosis) -> str:
    """The diagnosis as the model reads it: one block per candidate, leading one first."""
    lines = [
        f"decision: {'abstain' if diagnosis.abstained else 'answer'} ({defuse(diagnosis.reason)})"
    ]
    if diagnosis.overruled_code:
        lines.append(
            f"the error_code field names {defuse(diagnosis.overruled_code)}, but the incident's "
            "records contradict that family: it was weighed as a hint"
        )
    deciding = [i for i in (diagnosis.causal_log_id, diagnosis.causal_stack_id) if i]
    if deciding:
        lines.append(f"the records that say what failed (cite them): {', '.join(deciding)}")
    for candidate in diagnosis.candidates[:MAX_DIAGNOSIS_CANDIDATES]:
        state = "offered" if candidate.offered else "NOT offered"
        lines.append(
            f"- {candidate.key} {candidate.error_name} (doc {candidate.doc_id}, score "
            f"{candidate.score:.2f}, {state}): {defuse(for_and_against(candidate))}"
        )
        missing = ", ".join(defuse(h.signal) for h in candidate.missing[:MAX_DIAGNOSIS_SIGNALS])
        if missing:
            lines.append(f"  expected but not observed: {missing}")
    return "<diagnosis>\n" + "\n".join(lines) + "\n</diagnosis>"


def build_messages(data: RcaInput) -> list[BaseMessage]:
    """The system rules and one human message holding the delimited evidence and the task."""
    diagnosis = diagnosis_of(data)
    items, omitted = select_incident_evidence(data.incident_evidence)
    collected = data.collected_evidence[:MAX_COLLECTED_ITEMS]
    shown_ids = (
        [str(d["id"]) for d in data.docs]
        + [e.id for e in items]
        + [str(c["id"]) for c in collected]
    )
    if diagnosis.abstained and not diagnosis.retrieval_low_confidence:
        status = DIAGNOSIS_ABSTAIN.format(reason=defuse(diagnosis.reason))
    else:
        status = RETRIEVAL_LOW if diagnosis.abstained else RETRIEVAL_OK
    task = RCA_TASK_PROMPT.format(
        retrieval_status=status,
        allowed_ids=", ".join(shown_ids) if shown_ids else "(none)",
    )
    blocks = [_format_docs(data.docs), _format_incident(data.incident, items, omitted)]
    if data.collected_evidence:
        blocks.append(_format_collected(data.collected_evidence))
    blocks.append(_format_diagnosis(diagnosis))
    human = "\n\n".join([*blocks, task])
    return [SystemMessage(content=RCA_SYSTEM_PROMPT), HumanMessage(content=human)]


def extract_json_object(text: str) -> dict[str, Any]:
    """The outermost JSON object in a reply, ignoring think blocks, fences and prose.

    Raises:
        InvalidOutput: No JSON object could be decoded from the text.
    """
    cleaned = _THINK_RE.sub("", text)
    fenced = _FENCE_RE.search(cleaned)
    candidates = [fenced.group(1), cleaned] if fenced else [cleaned]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        starts = [m.start() for m in re.finditer(r"\{", candidate)][:MAX_JSON_STARTS]
        for start in starts:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise InvalidOutput("no JSON object found in the reply")


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """``loc: message`` for the first few errors, short enough to send back to a model."""
    errors = exc.errors()
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}" for e in errors]
    more = f" (+{len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more


def parse_draft(text: str) -> RcaDraft:
    """Validate a reply as an ``RcaDraft``.

    Raises:
        InvalidOutput: The reply holds no JSON object or it does not match the schema.
    """
    obj = extract_json_object(text)
    try:
        return RcaDraft.model_validate(obj)
    except ValidationError as exc:
        raise InvalidOutput(describe_validation_error(exc)) from exc


def complete_rca(draft: RcaDraft, data: RcaInput, generator: str) -> Rca:
    """The model's draft with band, outcome and provenance computed here, never by the model.

    The leading hypothesis gets the diagnosis' band when it names the family the diagnosis
    leads with (at most ``low`` otherwise); alternatives are at most ``low``; every hypothesis
    is flagged where the diagnosis contradicts it or it cites nothing from the incident.
    """
    diagnosis = diagnosis_of(data)
    hypotheses, band = flag_hypotheses(draft.hypotheses, diagnosis, data.docs)
    abstain = diagnosis.abstained
    if abstain:
        band = ConfidenceBand.INSUFFICIENT
        hypotheses = [h.model_copy(update={"confidence": band}) for h in hypotheses]
    summary = draft.summary
    if abstain and INSUFFICIENT_EVIDENCE.lower() not in summary.lower():
        summary = _clip(f"{INSUFFICIENT_EVIDENCE}: {summary}", 4_000)
    return Rca(
        **draft.model_dump(exclude={"summary", "hypotheses"}),
        summary=summary,
        hypotheses=hypotheses,
        outcome=Outcome.INSUFFICIENT_EVIDENCE if abstain else Outcome.ANALYSIS,
        confidence=band,
        provenance=Provenance(
            generator=generator,
            prompt_version=PROMPT_VERSION,
            knowledge_version=data.knowledge_version,
        ),
    )


def model_label(model: BaseChatModel) -> tuple[str, str]:
    """``(provider, model name)`` as the chat model reports them for tracing."""
    try:
        params = model._get_ls_params()
    except Exception:  # a label is never worth failing for
        params = {}
    provider = str(params.get("ls_provider") or type(model).__name__.lower())
    name = str(params.get("ls_model_name") or "unknown")
    return provider, name


def is_timeout(exc: BaseException) -> bool:
    """Our deadline or the client's own (``APITimeoutError``, ``httpx.ReadTimeout`` …)."""
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def describe_provider_error(exc: BaseException) -> str:
    """The exception's class name and, for an HTTP error, its status; never its message.

    Messages can echo request content or credentials, so they stay in the logs.
    """
    status = getattr(exc, "status_code", None)
    return (
        f"{type(exc).__name__} (HTTP {status})" if isinstance(status, int) else type(exc).__name__
    )


class LlmGenerator:
    """RCA drafts from a chat model, failing open to the extractive generator.

    Args:
        model: Any langchain-core chat model, used as is.
        timeout_seconds: Limit of each model call (a retry gets its own).
        provider: Provider part of the label; taken from the model when omitted.
        model_name: Model part of the label; taken from the model when omitted.
        fallback: The generator used when the model cannot produce a valid draft.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        timeout_seconds: float = 30.0,
        provider: str | None = None,
        model_name: str | None = None,
        fallback: ExtractiveGenerator | None = None,
    ) -> None:
        reported_provider, reported_name = model_label(model)
        self.model = model
        self.timeout_seconds = timeout_seconds
        self.fallback = fallback or ExtractiveGenerator()
        #: ``llm:<provider>/<model>``, recorded as the generator of every draft it writes.
        self.name = f"llm:{provider or reported_provider}/{model_name or reported_name}"

    async def generate(self, data: RcaInput) -> Rca:
        """A draft written by the model, or the extractive draft with the reason it failed."""
        messages = build_messages(data)
        try:
            draft = await self._draft(messages)
        except InvalidOutput as exc:
            return self._fail_open(data, f"invalid output twice: {exc}")
        except Exception as exc:  # any provider failure fails open
            if is_timeout(exc):
                return self._fail_open(data, f"timeout after {self.timeout_seconds:g}s")
            reason = f"provider error: {describe_provider_error(exc)}"
            return self._fail_open(data, reason, error=exc)
        return complete_rca(draft, data, self.name)

    async def _draft(self, messages: list[BaseMessage]) -> RcaDraft:
        reply = await self._call(messages)
        try:
            return parse_draft(reply)
        except InvalidOutput as exc:
            logger.info("%s: invalid reply, retrying once: %s", self.name, exc)
            repair = [
                *messages,
                AIMessage(content=_clip(reply, MAX_ECHO_CHARS)),
                HumanMessage(content=RCA_REPAIR_PROMPT.format(error=exc)),
            ]
        return parse_draft(await self._call(repair))

    async def _call(self, messages: list[BaseMessage]) -> str:
        reply = await asyncio.wait_for(self.model.ainvoke(messages), self.timeout_seconds)
        return str(reply.text)

    def _fail_open(self, data: RcaInput, reason: str, *, error: BaseException | None = None) -> Rca:
        reason = _clip(f"{self.name}: {reason}", MAX_ERROR_CHARS)
        logger.warning("LLM RCA failed open to extractive: %s", reason, exc_info=error)
        rca = self.fallback.build(data)
        provenance = rca.provenance.model_copy(update={"fallback_reason": reason})
        return rca.model_copy(update={"provenance": provenance})
