"""Differential diagnosis: weigh the incident's own evidence against every retrieved family.

For each retrieved family (docs grouped by ``error_code``; a runbook without one stands alone)
the diagnosis compares the family's expected signals (``app.rag.signals``, derived at ingest)
with what the incident shows (``app.evidence.signals``) and records:

- ``confirmed``: expected signals the incident shows, with the evidence ids showing them;
- ``contradicted``: the incident shows something else where the family expects one thing --
  another service (``component``), another source file, another exception type, another
  HTTP status class (or client error), another error code in the evidence, a platform failure
  the family never names (disk full, out of memory…), requests to another family's endpoint;
- ``missing``: expected signals not observed;
- ``hints``: an error code typed only in the reporter's prose. A hint adds a little, never
  counts as support and never outweighs a contradiction (``why`` says where a code came from).

Score (documented in docs/architecture/grounding.md)::

    score = similarity + 0.1 / retrieval_rank
            + sum(weight(kind) * strength) - sum(penalty(kind)) + hints

``similarity`` is the doc's dense cosine; ``retrieval_rank`` the family's place in the
retrieved order (after the service boost); ``strength``
is 1, or 0.5 when the only evidence is a routine (INFO) log line; each kind counts once except
phrases, whose weight grows with how distinctive their words are among the candidates. A
candidate **contradicted on its component** (the incident's service belongs to another system
and nothing in the evidence names this family's service; or the trace runs through other
files; or the failing requests went to another family's endpoint) with no confirmed
component signal (service, path, file, identifier, or the error code from the evidence)
**is not offered**. The final decision: answer with the best offered
candidate when it has confirmed support and no contradiction (support from the reporter's
prose alone needs similarity >= ``PROSE_MIN_SIMILARITY``; where only services confirm every
supported candidate, the closest by similarity is the best); with retrieval similarity alone
when the incident shows nothing either way and the retrieval gate passed; otherwise abstain
(``similar symptoms in a system the knowledge base does not cover``) -- even when similarity
cleared the floor. A collected 5xx ratio measured flat, with nothing but weak confirmations for
any family, also abstains: there is no failure in view to explain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from typing import Any

from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS
from app.evidence.signals import (
    CODE,
    CONDITION,
    EVENT_FIELD,
    EXCEPTION,
    FAILURE_SIGNS,
    FIELD_CODE,
    FILE,
    IDENTIFIER,
    MESSAGE,
    PATH,
    PHRASE,
    RECORD_SOURCES,
    SERVICE,
    SERVICE_FIELD,
    STATUS,
    STATUS_CLASS,
    IncidentSignals,
    exception_kind,
    item_shows_trouble,
    observe_incident,
)
from app.evidence.sources.signals import STATUS_FLAT
from app.evidence.trouble import says_nothing_fails
from app.evidence.wording import contains_phrase, quoted, words
from app.rca.candidates import SPECIFIC_KINDS, WHERE_KINDS, Candidate, SignalHit
from app.rca.liveness import not_live
from app.rca.match_context import MatchContext, families
from app.rca.matching import (
    FAILURE_KINDS,
    WEAK_STRENGTH,
    component_confirmed,
    dedupe,
    excuse_prose_statuses,
    is_one_word,
    missing_signals,
    shows_failure,
    weigh_codes,
    weigh_conditions,
    weigh_contrast_files,
    weigh_identifiers,
    weigh_named_fields,
    weigh_other_paths,
    weigh_paths,
    weigh_phrases,
    weigh_ruled_out,
    weigh_services,
    weigh_set,
    weigh_statuses,
)
from app.rca.ownership import (
    weigh_code_location,
    weigh_foreign_systems,
    weigh_shown_working,
)
from app.rca.service_matching import neighbour_words

__all__ = ["SPECIFIC_KINDS", "Candidate", "Diagnosis", "SignalHit", "diagnose"]

#: Confirmed-signal weights; each kind counts once (phrases: see ``app.rca.matching``).
WEIGHTS = {
    CODE: 1.0,
    CONDITION: 0.2,
    SERVICE: 0.3,
    FILE: 0.3,
    EXCEPTION: 0.3,
    IDENTIFIER: 0.2,
    PATH: 0.2,
    STATUS: 0.15,
    STATUS_CLASS: 0.05,
}
#: Penalties of contradicted kinds.
PENALTIES = {
    CODE: 0.6,
    SERVICE: 0.4,
    FILE: 0.3,
    EXCEPTION: 0.3,
    STATUS_CLASS: 0.3,
    CONDITION: 0.3,
    PATH: 0.3,
}
#: What a code typed only in the prose adds.
HINT_WEIGHT = 0.1
#: Retrieval's own order counts too: ``RANK_WEIGHT / retrieval rank`` is added to the score.
RANK_WEIGHT = 0.1
NOT_COVERED = "similar symptoms in a system the knowledge base does not cover"
NO_HISTORY = "no similar history in the knowledge base"
NO_SUPPORT = "no candidate has confirmed, uncontradicted support in the incident's evidence"
NO_FAILURE = "the measured error ratio stayed flat and no evidence shows a failure"
NOT_LIVE = (
    "the report tells of no live failure (a question, planned work, a test or a closed "
    "incident's follow-up) and no production record shows one"
)


@dataclass
class Diagnosis:
    """Every candidate ranked, and the final decision."""

    candidates: list[Candidate]
    abstained: bool
    reason: str
    retrieval_low_confidence: bool
    #: ``evidence`` (confirmed support), ``similarity`` (nothing either way) or ``abstain``.
    basis: str = "abstain"
    #: The ``error_code`` field's code when the records overruled it (weighed as a hint).
    overruled_code: str | None = None
    #: The log entry holding the parser's causal record (the draft always cites it).
    causal_log_id: str | None = None
    #: The stack line that says what failed (the draft always cites it).
    causal_stack_id: str | None = None

    @property
    def leading(self) -> Candidate | None:
        """The probable cause offered, None when abstaining."""
        return None if self.abstained or not self.candidates else self.candidates[0]

    def runner_up(self) -> Candidate | None:
        """The best other offered candidate."""
        others = [c for c in self.candidates[1:] if c.offered]
        return others[0] if others else None

    def as_dict(self) -> dict[str, Any]:
        """Plain, JSON-serialisable form (state key ``diagnosis``)."""
        leading = self.leading
        return {
            "abstained": self.abstained,
            "basis": self.basis,
            "reason": self.reason,
            "verdict": self.reason if self.abstained else None,
            "leading": leading.key if leading else None,
            "retrieval_low_confidence": self.retrieval_low_confidence,
            "overruled_code": self.overruled_code,
            "candidates": [c.as_dict() for c in self.candidates],
        }


def _score(cand: Candidate, phrase_weight: float) -> float:
    best: dict[str, float] = {}
    for hit in cand.confirmed:
        if hit.kind == PHRASE:
            continue
        strength = WEAK_STRENGTH if hit.weak else 1.0
        best[hit.kind] = max(best.get(hit.kind, 0.0), WEIGHTS.get(hit.kind, 0.0) * strength)
    if STATUS in best:
        best.pop(STATUS_CLASS, None)
    penalty = sum(PENALTIES.get(k, 0.0) for k in {h.kind for h in cand.contradicted})
    hint = HINT_WEIGHT if cand.hints else 0.0
    retrieval = cand.similarity + RANK_WEIGHT / cand.retrieval_rank
    return retrieval + sum(best.values()) + phrase_weight - penalty + hint


def _excuse_moved_code(cand: Candidate, ctx: MatchContext, own: Sequence[str]) -> None:
    """Drop a file contradiction where the same frame runs this family's own function.

    Code moves between files (``checkout_service.py`` split into ``checkout/discount.py``); a
    function name such as ``apply_discount`` survives the move, so a frame that names it
    confirms the family and its new file says nothing against it. Not where the frame's path
    names another family's service (``/srv/pos_api/till_checkout.py``, ``apply_discount``):
    the same function name in another system's code is that system's failure.
    """
    functions = {
        evidence_id: hit.signal
        for hit in cand.confirmed
        if hit.kind == IDENTIFIER and not hit.weak
        for evidence_id in hit.evidence_ids
    }
    others = ctx.all_services - set(own)
    kept: list[SignalHit] = []
    for hit in cand.contradicted:
        frame = next((i for i in hit.evidence_ids if i in functions), None)
        if hit.kind != FILE or frame is None or _path_names(ctx.texts.get(frame, ""), others):
            kept.append(hit)
            continue
        cand.why.append(
            f"the trace runs through {hit.observed or 'another file'}, not {hit.signal}, in "
            f"{functions[frame]}: the family's code has moved, not changed family"
        )
    cand.contradicted = kept


def _path_names(frame: str, services: Set[str]) -> bool:
    """Whether a frame's file path has a directory named as one of ``services`` (``pos_api``)."""
    directories = {p.replace("_", "-").lower() for p in re.findall(r"([\w.-]+)[/\\]", frame)}
    return bool(directories & services)


def _candidate(
    group: Sequence[Mapping[str, Any]],
    signals: Mapping[str, list[str]],
    rank: int,
    ctx: MatchContext,
) -> Candidate:
    top = group[0]
    meta = top.get("metadata") or {}
    cand = Candidate(
        error_code=str(meta["error_code"]) if meta.get("error_code") else None,
        error_name=str(meta.get("error_name") or meta.get("heading") or ""),
        doc_id=str(top.get("id")),
        similarity=max(float(d.get("similarity") or 0.0) for d in group),
        retrieval_rank=rank,
        service_match=str((top.get("why") or {}).get("service_match") or "unknown"),
    )
    neighbours = neighbour_words(group)
    weigh_codes(cand, ctx)
    weigh_services(cand, ctx, list(signals.get("services", [])), neighbours)
    examples = {e.lower() for e in signals.get("exception_examples", [])}
    exceptions = signals.get("exceptions", [])
    weigh_set(
        cand,
        ctx,
        EXCEPTION,
        exceptions,
        contradict=any(e.lower() not in examples for e in exceptions),
    )
    weigh_set(cand, ctx, FILE, signals.get("files", []), contradict=True)
    weigh_contrast_files(cand, ctx, signals.get("contrast_files", []))
    weigh_code_location(cand, ctx, str(meta.get("component") or ""), signals.get("services", []))
    weigh_statuses(cand, ctx, signals.get("statuses", []), signals.get("contrast_statuses", []))
    weigh_paths(cand, ctx, signals.get("paths", []))
    weigh_identifiers(cand, ctx, signals.get("identifiers", []))
    weigh_other_paths(cand, ctx, signals.get("paths", []), neighbours)
    phrase_weight = weigh_phrases(cand, ctx, signals.get("phrases", []))
    weigh_named_fields(cand, ctx, signals.get("phrases", []))
    weigh_conditions(cand, ctx, signals.get("conditions", []))
    weigh_ruled_out(cand, ctx, signals.get("services", []))
    weigh_foreign_systems(cand, ctx, signals.get("services", []), neighbours)
    weigh_shown_working(cand, ctx, signals.get("services", []), neighbours)
    dedupe(cand)
    _excuse_moved_code(cand, ctx, signals.get("services", []))
    excuse_prose_statuses(cand, ctx)
    cand.missing = missing_signals(cand, signals)
    cand.score = _score(cand, phrase_weight)
    component_contradicted = any(h.kind in (SERVICE, FILE, PATH) for h in cand.contradicted)
    if component_contradicted and not component_confirmed(cand):
        cand.offered = False
        cand.why.append("contradicted on its component with no specific confirmed signal")
    for hint in cand.hints:
        cand.why.append(f"{hint.signal}: {hint.why}")
    for hit in cand.confirmed:
        if hit.kind == CODE and hit.why:
            cand.why.append(f"{hit.signal}: {hit.why}")
    if not cand.confirmed:
        cand.why.append("no incident evidence" + (" (similarity only)" if cand.similarity else ""))
    return cand


def diagnose(
    incident: Mapping[str, Any],
    docs: Sequence[Mapping[str, Any]],
    *,
    retrieval_low_confidence: bool,
    collected: Iterable[Mapping[str, Any]] = (),
    patterns: Sequence[str] = DEFAULT_ERROR_CODE_PATTERNS,
) -> Diagnosis:
    """Weigh every retrieved family against the incident and decide whether to answer.

    Args:
        incident: An incident as ``IncidentCreate`` fields.
        docs: The ``rag`` node's docs (state form), best first.
        retrieval_low_confidence: The retrieval gate's decision (one input of the final one).
        collected: Collected evidence items (metric series, log records).
        patterns: Error-code regular expressions.

    Returns:
        Candidates ranked (offered first, then by score) and the final abstain decision.
    """
    observed = observe_incident(incident, collected, patterns)
    groups = families(docs)
    candidates, reporter = _weigh_all(groups, observed)
    overruled = _field_code_overruled(candidates, observed)
    if overruled:
        # The supplied code is a claim the records contradict: weigh it again as a hint.
        observed = replace(
            observed,
            observations=[
                replace(o, source=MESSAGE) if o.evidence_id == FIELD_CODE else o
                for o in observed.observations
            ],
        )
        candidates, reporter = _weigh_all(groups, observed)
    diagnosis = _decide(candidates, retrieval_low_confidence, observed, reporter)
    if overruled:
        diagnosis.overruled_code = str(incident.get("error_code") or "").strip() or None
    diagnosis.causal_log_id = observed.causal_log_id
    diagnosis.causal_stack_id = observed.causal_stack_id
    return diagnosis


def _weigh_all(
    groups: Sequence[Sequence[Mapping[str, Any]]], observed: IncidentSignals
) -> tuple[list[Candidate], str | None]:
    """Every family weighed and ranked, and the system the incident comes from, if known."""
    ctx = MatchContext(observed, groups)
    candidates = [
        _candidate(group, signals, rank, ctx)
        for rank, (group, signals) in enumerate(zip(groups, ctx.signals, strict=True), start=1)
    ]
    candidates.sort(key=lambda c: (not c.offered, -c.score, c.retrieval_rank))
    return candidates, ctx.reporter[0] if ctx.reporter else None


def _field_code_overruled(candidates: Sequence[Candidate], observed: IncidentSignals) -> bool:
    """Whether the records outweigh the ``error_code`` field.

    Whoever filed the incident (a person, an alert rule's label) may name the wrong family.
    Never when the records show the field's family failing in its own terms, that is by
    something the other family does not share; otherwise the field is overruled, in favour of
    another offered family contradicted by nothing but the field, in two cases:

    - the field's family is contradicted by a record (a field, stack, log or collected line)
      and the other family shows its own failure there (``error_code=PAY-408`` over 502s from
      the card gateway, a status the PAY-408 doc sets itself apart from);
    - nothing but the field, or what the two families share, confirms the field's family (a
      status class, a 422 both answer with), and the other family's own exception, file,
      function, endpoint or phrase shows in the stack or logs (``error_code=CH-502`` over a
      ``ZeroDivisionError`` in ``checkout_service.py``; ``error_code=POS-422-QTY`` over a 422
      body saying "lines must not be empty"). A status alone does not overrule it: a 503 fits
      more than one family.
    """
    prose = {i.id for i in observed.items if i.source == MESSAGE}

    def by_field(hit: SignalHit) -> bool:
        return hit.kind == CODE and hit.evidence_ids == [FIELD_CODE]

    def in_records(hit: SignalHit) -> bool:
        return any(
            i not in prose and i not in (FIELD_CODE, SERVICE_FIELD) for i in hit.evidence_ids
        )

    named = next((c for c in candidates if any(by_field(h) for h in c.confirmed)), None)
    if named is None:
        return False
    failing = observed.failing_records
    ids = (i for h in named.contradicted for i in h.evidence_ids)
    against = {i for i in ids if i not in prose and i != FIELD_CODE}
    # The field's family's own service in lines that show it healthy ("GET /chiller/v1/health
    # 200") is no record of its failure, nor is another system's failing line with its words.
    recorded = [
        h
        for h in named.confirmed
        if not by_field(h) and in_records(h) and (h.kind != SERVICE or _seen_failing(h, failing))
        if not set(h.evidence_ids) <= against
    ]
    contradicted = bool(against)

    def outweighs(other: Candidate) -> bool:
        shared = {(h.kind, h.signal) for h in other.confirmed}
        own = [h for h in recorded if (h.kind, h.signal) not in shared]
        if any(h.kind in FAILURE_KINDS and not h.weak and not is_one_word(h) for h in own):
            # Two failures in view, and the field says which one the incident is about.
            return False
        if contradicted:
            return shows_failure(other)
        # A routine line or one word of an error body ("total … matches") confirms nothing.
        # The other family's own service in the line that fails ("inventory-service 503 'no
        # healthy upstream'") names the failing hop, unless the field's family runs there too.
        named_services = {h.signal for h in named.confirmed if h.kind == SERVICE}
        # An endpoint says where, not which failure: "POST /checkout 504" after the payment
        # provider's deadline passed is the web shop's request, not its crash.
        return all(h.kind in (STATUS_CLASS, PATH) or h.weak or is_one_word(h) for h in own) and any(
            (h.kind in _OWN_FAILURE_KINDS and not h.weak and in_records(h))
            or (h.signal not in named_services and _seen_failing(h, failing))
            for h in other.confirmed
        )

    return any(
        outweighs(c)
        for c in candidates
        if c is not named and c.offered and all(by_field(h) for h in c.contradicted)
    )


#: What shows a family's own failure beyond a status: its exception, code location, phrase.
_OWN_FAILURE_KINDS = frozenset({EXCEPTION, FILE, IDENTIFIER, PATH, PHRASE})


#: A candidate the reporter's prose alone confirms needs at least this similarity to answer.
PROSE_MIN_SIMILARITY = 0.5
#: Similarity alone answers only where the doc's own cosine says the words are alike: a family
#: the keyword leg alone found through one shared word ("card declines store 12" and the
#: chiller doc's "every store", cosine 0.13) is no answer. Measured: 0.30 changes one answer
#: on the domain, holdout and probe sets (that one, right); 0.40 loses seven right ones.
SIMILARITY_ONLY_MIN = 0.3


def _fails_slowly(cand: Candidate) -> bool:
    """Whether slowness is the family's failure: its doc expects a timeout's status or exception.

    "Reservations take 3 s but all succeed, no errors" is no outage of the inventory service;
    "payments slow, no errors" is the payment timeout family's failure on its way.
    """
    expected = [*cand.confirmed, *cand.missing]
    return any(h.kind == STATUS and h.signal in ("408", "504") for h in expected) or any(
        h.kind == EXCEPTION and exception_kind(h.signal) == "timeout" for h in expected
    )


def _evidence_enough(
    cand: Candidate,
    prose: frozenset[str],
    trouble: bool,
    fine: bool,
    denied: bool,
    faulted: bool = False,
) -> bool:
    """Confirmed by a record (field, stack, log, collected item), or with fair similarity.

    ``prose`` holds the ids of the reporter's own words (message, notes). A routine or handled
    log line counts like prose: "pos-api INFO till 2 opened" in a quiet log says nothing failed
    there. The incident's own ``service`` field stays a record even when it only names a
    caller the doc lists (a neighbour, weak): "503 on lookups" from ``pos-api`` is the PLU
    family's caller reporting it. But where only the service confirms the family, the
    incident must say something fails (``trouble``) or be fairly similar: "stock counts wrong
    after the nightly sync" from inventory-service is that service, not its outage family.
    Not even then when the reporter says outright that nothing fails (``fine``: "CPU at 95%,
    no errors, latency fine"; slowness with no errors is still the timeout family's failure).
    Nor where only a caller's name (a weak service) ties the family in and a record shows a
    programming fault (``faulted``). Nor where only the service confirms the family and the reporter
    says its failure does not show (``denied``), whatever else goes wrong: "settlement file
    imported twice … payment latency and error rates were normal" from payment-service is not
    the timeout family.
    """
    only_where = all(h.kind in WHERE_KINDS for h in cand.confirmed)
    if only_where and denied:
        return False
    if only_where and faulted and all(h.weak for h in cand.confirmed if h.kind == SERVICE):
        return False  # "KeyError … reports/eod.py" from pos-api is not the PLU service it calls
    if not trouble and only_where:
        # Nothing fails anywhere and only where it runs confirms the family: the service field
        # with fair similarity may still answer, log lines that merely name the service never
        # do (the family is where the lines come from, not what happened).
        by_field = any(SERVICE_FIELD in h.evidence_ids for h in cand.confirmed)
        return by_field and not fine and cand.similarity >= PROSE_MIN_SIMILARITY
    if cand.similarity >= PROSE_MIN_SIMILARITY:
        return True
    if trouble and any(
        h.kind == SERVICE and "-" in h.signal and not h.weak for h in cand.confirmed
    ):
        # The report names the family's own service in full ("checkout-service … 5xx on POST
        # /checkout") and something fails: as good as the ``service`` field saying so.
        return True
    return any(
        i not in prose and (not h.weak or i == SERVICE_FIELD)
        for h in cand.confirmed
        for i in h.evidence_ids
    )


#: A phrase of at least this many words, quoted, is the system's own message.
QUOTED_PHRASE_WORDS = 3


def _quotes_its_error(cand: Candidate, quotes: Sequence[Sequence[str]]) -> bool:
    """Whether the reporter quotes what the system said in the family's own words.

    "Till says 'Sale rejected: quantity must be greater than 0'" is the till's error body,
    copied from the screen: as much a record of the failure as a log line holding it, however
    few words of the report are like the family's history.
    """
    phrases = [
        phrase
        for h in cand.confirmed
        if h.kind == PHRASE and not h.weak
        if len(phrase := words(h.signal)) >= QUOTED_PHRASE_WORDS
    ]
    return any(contains_phrase(q, p) for q in quotes for p in phrases)


def _says_something_fails(observed: IncidentSignals) -> bool:
    """Whether any piece of the incident says something fails.

    A failure word (``TROUBLE_RE``), a code, a status, an exception or a platform condition
    counts, unless only a routine or handled line shows it; the ``service`` field alone says
    nothing, and neither does a log line's warning level.
    """
    return any(o.kind in FAILURE_SIGNS and not o.weak for o in observed.observations) or any(
        item_shows_trouble(i) for i in observed.items if i.id != SERVICE_FIELD
    )


def _causal_choice(failing: Sequence[Candidate], observed: IncidentSignals) -> Candidate | None:
    """Of two or more families each failing in the records, the one the causal record shows.

    "WARN POST /pos/v1/sales 422 lines must not be empty" beside three "ERROR PLU service
    unavailable (503)" lines: the parser's causal record (errors before warnings, the first
    one carrying evidence) says which failure the incident is about. Not when the
    ``error_code`` field names one of them: then the field says which.
    """
    causal = observed.causal_log_id
    if causal is None or len(failing) < 2:
        return None
    if any(h.kind == CODE and FIELD_CODE in h.evidence_ids for c in failing for h in c.confirmed):
        return None
    return next(
        (
            c
            for c in failing
            if any(
                h.kind in FAILURE_KINDS and not h.weak and causal in h.evidence_ids
                for h in c.confirmed
            )
        ),
        None,
    )


def _seen_failing(hit: SignalHit, failing: frozenset[str]) -> bool:
    """A service named in a record that shows something failing: the hop that fails."""
    return hit.kind == SERVICE and not hit.weak and any(i in failing for i in hit.evidence_ids)


def _told_apart(
    failing: list[Candidate], claims: frozenset[str], records: frozenset[str]
) -> list[Candidate]:
    """The failing candidates whose failure shows in what tells them apart, records first.

    Three POS 422 families all see the 422; what tells them apart is the field the body names.
    A family the records tell apart (``lines[3].quantity exceeds 999``) leads one only the
    reporter's words or routine lines tell apart ("the amount thing again?", ``total=23.96``
    in the request line), and either leads one told apart by nothing. A family's own service
    in a failing record tells it apart too: "ECONNREFUSED (inventory-api)" beside
    "plu-service GET /health 200", both under a caller's 503s. ``claims`` are the ids of what
    only says which failure it is (the reporter's words, the alert's name).
    """
    if len(failing) < 2:
        return failing

    def own(cand: Candidate) -> list[SignalHit]:
        return [
            h
            for h in cand.confirmed
            if ((h.kind in FAILURE_KINDS and not h.weak) or _seen_failing(h, records))
            and (h.kind, h.signal) not in shared
        ]

    shared = set.intersection(
        *({(h.kind, h.signal) for h in c.confirmed if not h.weak} for c in failing)
    )
    by_records = [
        c for c in failing if any(i not in claims for h in own(c) for i in h.evidence_ids)
    ]
    return by_records or [c for c in failing if own(c)] or failing


def _closest(supported: list[Candidate]) -> Candidate:
    """The first supported candidate, unless only services confirm any of them.

    A service says where a failure runs, not which one: when it is all that confirms every
    candidate (pos-api runs four families and calls the PLU service), the one whose history
    the incident's words are closest to leads ("tills can't sell: 'PLU not available'" from
    pos-api is the PLU family's outage, not the amount family's 422).
    """
    if all(h.kind in (SERVICE, STATUS_CLASS) for c in supported for h in c.confirmed):
        return max(supported, key=lambda c: c.similarity)
    return supported[0]


def _decide(
    candidates: list[Candidate],
    retrieval_low_confidence: bool,
    observed: IncidentSignals,
    reporter: str | None,
) -> Diagnosis:
    if not candidates:
        return Diagnosis([], True, NO_HISTORY, retrieval_low_confidence)
    offered = [c for c in candidates if c.offered]
    if not offered:
        where = reporter or "this system"
        return Diagnosis(candidates, True, f"{NOT_COVERED} ({where})", retrieval_low_confidence)
    if not_live(observed):
        return Diagnosis(candidates, True, NOT_LIVE, retrieval_low_confidence)
    prose = frozenset(i.id for i in observed.items if i.source == MESSAGE)
    trouble = _says_something_fails(observed)
    said = [i.text for i in observed.items if i.source == MESSAGE]
    # What the reporter quotes, read once for every candidate.
    quotes = [q for t in said for q in quoted(t)]
    denies = any(says_nothing_fails(t) for t in said)
    # A programming fault in a record: a caller's name alone cannot pin it on its callee.
    faulted = any(
        o.source in RECORD_SOURCES and not o.weak and exception_kind(o.value) == "fault"
        for o in observed.of(EXCEPTION)
    )
    denies_but_slow = any(says_nothing_fails(t, slowness_fails=False) for t in said)

    def denied(cand: Candidate) -> bool:
        return denies or (denies_but_slow and not _fails_slowly(cand))

    def fine(cand: Candidate) -> bool:
        return not trouble and denied(cand)

    supported = [
        c
        for c in offered
        if c.supported
        and (
            _evidence_enough(c, prose, trouble, fine(c), denied(c), faulted)
            or _quotes_its_error(c, quotes)
        )
    ]
    flat = bool(observed.of(STATUS_FLAT))
    if flat and not any(not h.weak for c in supported for h in c.confirmed):
        # The measured error ratio stayed flat and nothing but a weak hint confirms a family:
        # there is no failure in view to explain, so neither a neighbour nor similarity may
        # name one.
        return Diagnosis(candidates, True, NO_FAILURE, retrieval_low_confidence)
    if supported:
        # A family whose own failure shows (exception, exact status, phrase, code, code
        # location) leads one confirmed only by where it runs and by routine or handled lines:
        # "sale rejected 422 … (re-keyed ok)" beside "plu-service … -> 503" is noise.
        failing = _told_apart(
            [c for c in supported if shows_failure(c)],
            prose | {EVENT_FIELD},
            observed.failing_records,
        )
        best = _causal_choice(failing, observed) or next(iter(failing), _closest(supported))
        # The best supported candidate leads, even when an unsupported one scored higher.
        ordered = [best, *(c for c in candidates if c is not best)]
        return Diagnosis(
            ordered,
            False,
            "confirmed by the incident's evidence",
            retrieval_low_confidence,
            "evidence",
        )
    leading = offered[0]
    generic_prose = all(
        h.kind in (STATUS, STATUS_CLASS) and all(i in prose for i in h.evidence_ids)
        for h in leading.confirmed
    )
    if (
        not retrieval_low_confidence
        and not leading.contradicted
        and generic_prose
        and not fine(leading)
        and leading.similarity >= SIMILARITY_ONLY_MIN
    ):
        # Nothing in the records either way; the reporter's words agreeing on a status
        # ("inv svc 503s") weigh no less than saying nothing that matches a signal. The
        # family's own exception or phrase in words retrieval finds unlike its doc is the mark
        # of the same failure in another system ("ZeroDivisionError in a finance notebook").
        # Not where the reporter says outright that nothing fails: that is a question.
        reason = (
            "similarity, with only the reporter's status agreeing"
            if leading.confirmed
            else "similarity only: the incident shows no signal either way"
        )
        return Diagnosis(candidates, False, reason, retrieval_low_confidence, "similarity")
    if retrieval_low_confidence and not any(c.confirmed for c in offered):
        return Diagnosis(candidates, True, NO_HISTORY, retrieval_low_confidence)
    return Diagnosis(candidates, True, NO_SUPPORT, retrieval_low_confidence)
