"""Matching one family's expected signals with what the incident shows.

Each ``weigh_*`` function compares one kind of expected signal (``app.rag.signals``) with the
observations (``app.evidence.signals``) and appends confirmed / contradicted hits to the
candidate; ``missing_signals`` lists what was expected but not observed. Rules:

- codes: the ``error_code`` field and codes in stack or log lines confirm (or, naming another
  known family, contradict); a code only in the prose is a hint;
- services: a piece of evidence naming one of the family's services confirms it (prose counts
  only for hyphenated names; path segments never count); the incident's ``service`` naming a
  caller or neighbour the doc's ``Component`` line names after "called by", "used by",
  "behind" or "via" (every telling part of the name is such a word) is a weak, neighbour
  confirmation; any other service contradicts the family's component. Without a
  ``service`` field the causal log record's service stands in, when the evidence names no
  service any candidate knows. The reporter ruling the family's service out ("pos-api is
  healthy") contradicts it when no record confirms the family;
- exceptions and files: seen ones confirm; only other ones (from non-routine evidence)
  contradict -- unless the doc gives its exceptions as examples;
- statuses: the exact status confirms, then the class; other classes contradict, and so does a
  status the doc sets the family against (``contrast_statuses``: "unlike a 502") and another
  client error (a 401 or 429 where the family expects a 422) -- unless only the reporter
  names the status and the records show the family's own failure (``excuse_prose_statuses``);
- contrast files: a trace through a file the doc names as another system's contradicts;
- failure conditions of the platform (disk full, out of memory, image pull, certificate…):
  an expected one confirms; another contradicts when nothing shows the family's own failure;
- whose failure it is (another system's code or records, the family's service shown
  working): ``app.rca.ownership``;
- paths, identifiers: confirm only;
- phrases: matched word by word; their weight grows with how distinctive their words are
  among the candidates' phrases.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.evidence.patterns import normal_code, unique, written_code_re
from app.evidence.signals import (
    CODE,
    CONDITION,
    EXCEPTION,
    FIELD_CODE,
    FILE,
    IDENTIFIER,
    MESSAGE,
    PATH,
    PHRASE,
    RECORD_SOURCES,
    SERVICE,
    SERVICE_FIELD,
    STACK,
    STATUS,
    STATUS_CLASS,
    Observation,
    exception_kind,
    path_matches,
)
from app.evidence.sources.signals import STATUS_FLAT
from app.evidence.statuses import status_class
from app.evidence.wording import contains_phrase, dismissed, words
from app.rca.candidates import Candidate, SignalHit
from app.rca.match_context import MatchContext
from app.rca.service_matching import (
    is_neighbour,
    is_own_side,
    mentions,
    name_pattern,
    named_to_rule_out,
)

#: A phrase weighs this per word, divided by how many candidates' phrases use the word.
PHRASE_WORD_WEIGHT = 0.08
MAX_PHRASE_WEIGHT = 0.4
#: Evidence from a routine (INFO) log line counts this much.
WEAK_STRENGTH = 0.5


def _strength(ids: Iterable[str], weak_ids: set[str]) -> tuple[list[str], bool]:
    ordered = unique(ids)
    strong = [i for i in ordered if i not in weak_ids]
    return strong + [i for i in ordered if i in weak_ids], not strong


def _hit(kind: str, signal: str, obs: Sequence[Observation], why: str | None = None) -> SignalHit:
    weak_ids = {o.evidence_id for o in obs if o.weak}
    ids, weak = _strength((o.evidence_id for o in obs), weak_ids)
    return SignalHit(kind, signal, ids, weak=weak, why=why)


def _evidence_code_source(obs: Observation) -> str:
    return {"field": "the error_code field", "stack": "the stack trace", "log": "a log line"}.get(
        obs.source, "collected evidence"
    )


def weigh_codes(cand: Candidate, ctx: MatchContext) -> None:
    """Codes: evidence confirms or contradicts; the prose only hints."""
    own = normal_code(cand.error_code)
    if not own:
        return
    for obs in ctx.observed.of(CODE):
        code = normal_code(obs.value)
        if obs.source == MESSAGE:
            if code == own:
                why = (
                    "the error_code field names it, but the records contradict it: a hint"
                    if obs.evidence_id == FIELD_CODE
                    else "code only in the prose: a hint"
                )
                cand.hints.append(SignalHit(CODE, obs.value, [obs.evidence_id], why=why))
            continue
        if code == own:
            cand.confirmed.append(
                _hit(CODE, obs.value, [obs], why=f"code from {_evidence_code_source(obs)}")
            )
        elif code in ctx.codes:
            cand.contradicted.append(
                SignalHit(
                    CODE,
                    cand.error_code or "",
                    [obs.evidence_id],
                    observed=obs.value,
                    why=f"{_evidence_code_source(obs)} names {obs.value}",
                )
            )
    if cand.error_code and not any(normal_code(o.value) == own for o in ctx.observed.of(CODE)):
        # The family's code typed another way in the reporter's words ("co500 back on the web
        # shop"), which the strict code patterns leave to retrieval: a hint like any prose code.
        pattern = written_code_re(cand.error_code)
        for item in ctx.observed.items:
            typed = pattern.search(item.text) if item.source == MESSAGE else None
            if typed and not dismissed(item.text, typed.group(0)):
                why = "code only in the prose, written another way: a hint"
                cand.hints.append(SignalHit(CODE, typed.group(0), [item.id], why=why))
                break
    dedupe(cand)


def dedupe(cand: Candidate) -> None:
    """One hit per (kind, signal), evidence ids merged."""
    for name in ("confirmed", "contradicted", "hints"):
        seen: dict[tuple[str, str], SignalHit] = {}
        for hit in getattr(cand, name):
            key = (hit.kind, hit.signal.upper() if hit.kind == CODE else hit.signal)
            if key in seen:
                seen[key].evidence_ids = unique([*seen[key].evidence_ids, *hit.evidence_ids])
                seen[key].weak = seen[key].weak and hit.weak
            else:
                seen[key] = hit
        setattr(cand, name, list(seen.values()))


def weigh_services(
    cand: Candidate, ctx: MatchContext, names: list[str], neighbours: set[str]
) -> None:
    """Services: named in the evidence, a neighbour, or another system."""
    if not names:
        return
    items = ctx.observed.items
    shown = [(n, i) for n in names for i in items if mentions(i, n)]
    reported = ctx.service
    if reported and reported not in names:
        # The incident names its own service, another one: a one-word alias elsewhere ("pos"
        # as a Kubernetes namespace) does not outweigh it; a full service name does, but not
        # in a record that shows it working ("pos-card-gateway auth success rate 99.8%" under
        # a gift-card service's 502). A stack trace is a failure's own record, every frame of it.
        shown = [
            (n, i)
            for n, i in shown
            if "-" in n
            and (
                i.source not in RECORD_SOURCES
                or i.source == STACK
                or i.id in ctx.observed.failing_records
            )
        ]
    field = ctx.by_id.get(SERVICE_FIELD)
    if reported in names and field is not None and not any(i is field for _, i in shown):
        # The field names the family's service with a release or a typo ("till-api-v2",
        # "chiler-monitor"): ``ctx.service`` reads it as the docs write it.
        shown.append((reported, field))
    if shown:
        canonical = next((n for n, _ in shown if n == names[0]), shown[0][0])
        ids, weak = _strength((i.id for _, i in shown), {i.id for _, i in shown if i.weak})
        cand.confirmed.append(SignalHit(SERVICE, canonical, ids, weak=weak))
        return
    if ctx.reporter is None:
        return
    reported, where = ctx.reporter
    own_side = is_own_side(reported, names)
    # A known service's alias neighbours the family as its first name does: "called by
    # checkout" covers ``webshop-checkout``, the checkout service's alias.
    usual = ctx.canonical.get(reported, reported)
    if own_side or any(is_neighbour(n, neighbours) for n in (reported, usual)):
        cand.confirmed.append(
            SignalHit(
                SERVICE,
                names[0],
                [where],
                observed=reported,
                weak=True,
                why=f"{reported} is this family's own system under another name"
                if own_side
                else f"{reported} calls or neighbours this family (named in its doc)",
            )
        )
    else:
        known = "another family's service" if reported in ctx.all_services else "a service"
        cand.contradicted.append(
            SignalHit(
                SERVICE,
                names[0],
                [where],
                observed=reported,
                why=f"the incident comes from {reported}, {known} this family does not cover",
            )
        )


def weigh_ruled_out(cand: Candidate, ctx: MatchContext, names: Sequence[str]) -> None:
    """The reporter rules out the family's service ("pos-api is healthy", "not pos-api").

    It contradicts the family's component unless a record (field, stack, log, collected item)
    confirms the family: the reporter's word stands when nothing else speaks, and yields to the
    evidence when it does. The ``service`` field is no such record: it says where the reporter
    looked, and "the chiller-monitor crash loop is fixed" from chiller-monitor rules it out.
    """
    prose = {i.id: i.text.lower() for i in ctx.observed.items if i.source == MESSAGE}
    ruled_out = [
        (name, item_id)
        for name in names
        if "-" in name
        for item_id, text in prose.items()
        if any(named_to_rule_out(text, m) for m in name_pattern(name).finditer(text))
    ]
    if not ruled_out:
        return
    records = (
        i
        for h in cand.confirmed
        if not h.weak
        for i in h.evidence_ids
        if i not in prose and i != SERVICE_FIELD
    )
    if any(records):
        return
    name, item_id = ruled_out[0]
    cand.contradicted.append(
        SignalHit(
            SERVICE,
            name,
            [item_id],
            observed=f"{name} ruled out",
            why=f"the reporter says {name} is not the one failing, and no record shows it is",
        )
    )


def weigh_set(
    cand: Candidate, ctx: MatchContext, kind: str, expected: Sequence[str], contradict: bool
) -> None:
    """Exceptions and files: confirmed when seen, contradicted when only others are seen."""
    if not expected:
        return
    wanted = {e.lower(): e for e in expected}
    seen = ctx.observed.of(kind)
    matched = [o for o in seen if o.value.lower() in wanted]
    for value in unique(wanted[o.value.lower()] for o in matched):
        cand.confirmed.append(
            _hit(kind, value, [o for o in matched if o.value.lower() == value.lower()])
        )
    if kind == EXCEPTION:
        # Another runtime's name for the same failure ("TimeoutException" for a doc's
        # "ReadTimeout") confirms it, named as seen.
        kinds = {exception_kind(e) for e in expected} - {None}
        said = ctx.exception_kinds
        alike = [o for o in seen if o not in matched and said[o] in kinds]
        for value in unique(o.value for o in alike):
            failure = next(said[o] for o in alike if o.value == value)
            named = ", ".join(e for e in expected if exception_kind(e) == failure)
            why = f"{value} is the same kind of failure as {named}"
            cand.confirmed.append(_hit(kind, value, [o for o in alike if o.value == value], why))
        matched += alike
    strong_others = [o for o in seen if not o.weak and o not in matched]
    if contradict and not matched and strong_others:
        cand.contradicted.append(
            SignalHit(
                kind,
                ", ".join(expected),
                unique(o.evidence_id for o in strong_others),
                observed=", ".join(unique(o.value for o in strong_others)),
            )
        )


def weigh_statuses(
    cand: Candidate, ctx: MatchContext, expected: Sequence[str], contrast: Sequence[str] = ()
) -> None:
    """Statuses: the exact one, else the class; other classes contradict.

    So does a status the doc sets the family against (``contrast``: "unlike a 502").
    """
    if not expected:
        return
    seen = ctx.observed.of(STATUS)
    exact = [o for o in seen if o.value in expected]
    for value in unique(o.value for o in exact):
        cand.confirmed.append(_hit(STATUS, value, [o for o in exact if o.value == value]))
    if exact:
        return
    classes = {status_class(s) for s in expected}
    against = [o for o in seen if not o.weak and o.value in contrast]
    if against:
        _status_against(cand, expected, against, "the family's doc sets it apart from {}")
        return
    same = [o for o in seen if status_class(o.value) in classes]
    # Client errors name their cause exactly (401 unauthorised, 429 rate limited, 422
    # invalid): another 4xx is another failure, where another 5xx may be the same one seen
    # through a proxy.
    strong_same = [o for o in same if not o.weak]
    if strong_same and all(status_class(o.value) == "4xx" for o in strong_same):
        _status_against(
            cand, expected, strong_same, "{} is another client error than " + "/".join(expected)
        )
        return
    if same:
        cand.confirmed.append(_hit(STATUS_CLASS, status_class(same[0].value), same))
        return
    # A measured error ratio that stayed flat speaks against a family that fails with that
    # class, but only when every class the family expects was measured flat.
    flat = [o for o in ctx.observed.of(STATUS_FLAT) if o.value in classes]
    if flat and classes <= {o.value for o in flat}:
        cand.contradicted.append(
            SignalHit(
                STATUS_CLASS,
                "/".join(sorted(classes)),
                unique(o.evidence_id for o in flat),
                observed=f"{flat[0].value} ratio flat",
            )
        )
        return
    strong = [o for o in seen if not o.weak]
    if strong:
        cand.contradicted.append(
            SignalHit(
                STATUS_CLASS,
                "/".join(sorted(classes)),
                unique(o.evidence_id for o in strong),
                observed=", ".join(unique(o.value for o in strong)),
            )
        )


def excuse_prose_statuses(cand: Candidate, ctx: MatchContext) -> None:
    """A status only the reporter names yields to the family's own failure in the records.

    "Card gateway giving bad gateway again?" over a trace ending in "SocketTimeoutException:
    Read timed out" in the payment client is the reporter's guess; the trace is the payment
    provider timing out, whatever status the reporter expects. Where nothing in the records
    shows the family's own failure (an exception, a phrase, a condition), the reporter's
    status still speaks against it.
    """
    prose = {i.id for i in ctx.observed.items if i.source == MESSAGE}
    own = any(
        h.kind in (EXCEPTION, PHRASE, CONDITION)
        and not h.weak
        and any(i not in prose for i in h.evidence_ids)
        for h in cand.confirmed
    )
    if own:
        cand.contradicted = [
            h
            for h in cand.contradicted
            if not (h.kind in (STATUS, STATUS_CLASS) and set(h.evidence_ids) <= prose)
        ]


def _status_against(
    cand: Candidate, expected: Sequence[str], against: Sequence[Observation], why: str
) -> None:
    """Record statuses that speak against the family; ``why`` has ``{}`` for what was seen."""
    observed = ", ".join(unique(o.value for o in against))
    cand.contradicted.append(
        SignalHit(
            STATUS_CLASS,
            "/".join(expected),
            unique(o.evidence_id for o in against),
            observed=observed,
            why=why.format(observed),
        )
    )


def weigh_contrast_files(cand: Candidate, ctx: MatchContext, contrast: Sequence[str]) -> None:
    """Files the doc names as another system's code contradict the family.

    ``CO-500 is the online checkout_service.py`` in the till family: a trace through that file
    runs in the web shop, not at the till.
    """
    wanted = {f.lower() for f in contrast}
    against = [o for o in ctx.observed.of(FILE) if not o.weak and o.value.lower() in wanted]
    if against and not any(h.kind == FILE for h in cand.confirmed):
        observed = ", ".join(unique(o.value for o in against))
        cand.contradicted.append(
            SignalHit(
                FILE,
                observed,
                unique(o.evidence_id for o in against),
                observed=observed,
                why=f"the family's doc names {observed} as another system's code",
            )
        )


#: Confirmed kinds that show *what* failed in the family's own terms; a platform failure
#: condition the family never names does not explain an incident that shows one of these.
FAILURE_KINDS = frozenset({CODE, EXCEPTION, STATUS, PHRASE, FILE, IDENTIFIER})


def is_one_word(hit: SignalHit) -> bool:
    """Whether a hit is a one-word phrase: a word the family's error body names ("lines")."""
    return hit.kind == PHRASE and len(words(hit.signal)) == 1


def shows_failure(cand: Candidate) -> bool:
    """Whether a non-weak confirmation shows what failed (``FAILURE_KINDS``)."""
    return any(h.kind in FAILURE_KINDS and not h.weak for h in cand.confirmed)


def weigh_conditions(cand: Candidate, ctx: MatchContext, expected: Sequence[str]) -> None:
    """Platform failure conditions: an expected one confirms; another contradicts.

    "inventory-service disk full", "chiller-monitor ImagePullBackOff": the service is the
    family's, the failure is not. Another condition contradicts only when nothing shows the
    family's own failure (exception, exact status, phrase, code, code location): in noisy logs
    a disk warning beside a pool-exhaustion error does not speak against the pool family. A
    condition only routine lines show counts too, then.
    """
    seen = [o for o in ctx.observed.of(CONDITION) if not o.weak]
    matched = [o for o in seen if o.value in expected]
    for value in unique(o.value for o in matched):
        cand.confirmed.append(_hit(CONDITION, value, [o for o in matched if o.value == value]))
    # One word the family's error body names ("lines") is no failure of its own beside a
    # condition: "600+ lines … 413 Payload Too Large" is the size limit, not a lines error.
    # Nor is the ``error_code`` field, a label someone gave the incident, not a record of it.
    own = any(
        h.kind in FAILURE_KINDS
        and not h.weak
        and not is_one_word(h)
        and not (h.kind == CODE and h.evidence_ids == [FIELD_CODE])
        for h in cand.confirmed
    )
    if matched or own:
        return
    # With nothing else showing the failure, routine lines say what happened: INFO "POST
    # /authorise 200 rc=05 Do not honour" under "card payments failing" is the issuer
    # declining, not the gateway failing.
    seen = seen or ctx.observed.of(CONDITION)
    if not seen:
        return
    observed = ", ".join(unique(o.value for o in seen))
    cand.contradicted.append(
        SignalHit(
            CONDITION,
            ", ".join(expected) or "its own failure",
            unique(o.evidence_id for o in seen),
            observed=observed,
            why=f"the incident shows {observed}, a failure the family's doc never names",
        )
    )


def weigh_named_fields(cand: Candidate, ctx: MatchContext, expected: Sequence[str]) -> None:
    """A validation error naming a field no family's error body names contradicts them all.

    The 422 families tell themselves apart by the field their body names (quantity, lines,
    amount); a 422 on ``customer.email`` or ``customer.loyalty_card`` is another failure of
    the same endpoint, which none of them describes. A field only this family's doc writes of
    (the amount family's "currency code mismatch") confirms it.
    """
    for field, (doc_id, ids) in ctx.field_docs.items():
        if doc_id == cand.doc_id:
            cand.confirmed.append(
                SignalHit(PHRASE, field, ids, why=f"only this family's doc writes of {field}")
            )
    if not ctx.other_fields:
        return
    own = {phrase[0] for p in expected if len(phrase := words(p)) == 1}
    if not own or any(h.kind == PHRASE and not h.weak for h in cand.confirmed):
        return
    observed = ", ".join(ctx.other_fields)
    cand.contradicted.append(
        SignalHit(
            PHRASE,
            ", ".join(sorted(own)),
            sorted(ctx.observed.failing_records),
            observed=observed,
            why=f"the error names {observed}, a field the family's doc never names",
        )
    )


def weigh_paths(cand: Candidate, ctx: MatchContext, expected: Sequence[str]) -> None:
    """Paths: an expected endpoint seen (id segments ignored)."""
    for path in expected:
        matched = [o for o in ctx.observed.of(PATH) if path_matches(path, o.value)]
        if matched:
            cand.confirmed.append(_hit(PATH, path, matched))


#: Confirmed kinds that name where a family runs (its component).
COMPONENT_KINDS = frozenset({SERVICE, PATH, FILE, IDENTIFIER})


def component_confirmed(cand: Candidate) -> bool:
    """Whether something names where the family runs.

    A service, path, file or function, or its error code from the evidence.
    """
    return any(h.kind in COMPONENT_KINDS or (h.kind == CODE and not h.weak) for h in cand.confirmed)


def weigh_other_paths(
    cand: Candidate, ctx: MatchContext, own: Sequence[str], neighbours: set[str]
) -> None:
    """Requests to another family's endpoint, and nothing naming this family's component.

    ``POST /checkout`` answered 502 with "upstream prematurely closed connection": the gateway
    phrase is the chiller family's, the endpoint the web shop's. Unless the endpoint is a
    neighbour's (PAY-408 is "called by checkout") or something names this family's own
    component, the failing requests went elsewhere.
    """
    if component_confirmed(cand):
        return
    seen = [o for o in ctx.observed.of(PATH) if o.source != MESSAGE and not o.weak]
    for signals in ctx.signals:
        for path in signals.get("paths", []):
            if path in own or set(words(path)) & neighbours:
                continue
            matched = [o for o in seen if path_matches(path, o.value)]
            if matched:
                cand.contradicted.append(
                    SignalHit(
                        PATH,
                        "its own component",
                        unique(o.evidence_id for o in matched),
                        observed=path,
                        why=f"the failing requests went to {path}, another family's endpoint",
                    )
                )
                return


def weigh_identifiers(cand: Candidate, ctx: MatchContext, expected: Sequence[str]) -> None:
    """Identifiers: an expected function or variable seen."""
    for name in expected:
        matched = [o for o in ctx.observed.of(IDENTIFIER) if o.value == name]
        if matched:
            cand.confirmed.append(_hit(IDENTIFIER, name, matched))


def weigh_phrases(cand: Candidate, ctx: MatchContext, expected: Sequence[str]) -> float:
    """Confirm phrases; return their weight (distinctive words weigh more)."""
    total = 0.0
    for phrase in expected:
        phrase_words = words(phrase)
        if not phrase_words:
            continue
        items = [
            i
            for i in ctx.observed.items
            if i.id not in (SERVICE_FIELD, FIELD_CODE)
            and not i.source_code
            and contains_phrase(i.words, phrase_words)
            and contains_phrase(ctx.unquiet(i), phrase_words)
        ]
        if not items:
            continue
        # A phrase only in a data field's name ("total=12.40" in a request line) is as weak as
        # a routine line: the request carried a total, nothing says the total failed.
        # Where the phrase is also said, the lines that only name such a field are no evidence
        # of it ("quantity_ok=true" beside "quantity issue on the tills?").
        named_only = {i.id for i in items if not contains_phrase(ctx.said(i), phrase_words)}
        if len(named_only) < len(items):
            items = [i for i in items if i.id not in named_only]
        ids, weak = _strength((i.id for i in items), {i.id for i in items if i.weak} | named_only)
        cand.confirmed.append(SignalHit(PHRASE, phrase, ids, weak=weak))
        weight = sum(
            PHRASE_WORD_WEIGHT / ctx.phrase_df.get(w, 1) for w in set(phrase_words) if w != "#"
        )
        total += weight * (WEAK_STRENGTH if weak else 1.0)
    return min(total, MAX_PHRASE_WEIGHT)


def missing_signals(cand: Candidate, signals: Mapping[str, Sequence[str]]) -> list[SignalHit]:
    """Expected signals not observed (one per kind that nothing confirmed)."""
    confirmed = {(h.kind, h.signal.lower()) for h in cand.confirmed}
    kinds = {
        "services": SERVICE,
        "exceptions": EXCEPTION,
        "statuses": STATUS,
        "paths": PATH,
        "files": FILE,
        "identifiers": IDENTIFIER,
        "phrases": PHRASE,
    }
    missing: list[SignalHit] = []
    has_service = any(h.kind == SERVICE for h in cand.confirmed)
    for key, kind in kinds.items():
        values = list(signals.get(key, []))
        if kind == SERVICE:
            values = values[:1] if not has_service else []
        if kind == STATUS and any(h.kind in (STATUS, STATUS_CLASS) for h in cand.confirmed):
            values = []
        if kind in (EXCEPTION, FILE) and any(h.kind == kind for h in cand.confirmed):
            values = []
        missing.extend(SignalHit(kind, v) for v in values if (kind, v.lower()) not in confirmed)
    return missing
