"""What every candidate family is compared with: the incident's observations, read once.

``families`` groups retrieved docs by family and ``merged_signals`` unions a family's expected
signals; ``MatchContext`` holds what the ``weigh_*`` rules of ``app.rca.matching`` ask of the
incident for every candidate -- the phrase words' spread, the fields the 422 bodies name, the
fields a failing validation error names, the failing records that name another capability's
system, the kind each exception says, and which service the incident comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from app.evidence.patterns import normal_code, unique
from app.evidence.services import (
    GENERIC_NAME_PARTS,
    is_larger_system,
    known_service,
    telling_parts,
)
from app.evidence.signals import (
    EXCEPTION,
    MESSAGE,
    PATH,
    SERVICE_FIELD,
    EvidenceText,
    IncidentSignals,
    Observation,
    exception_kind_in,
)
from app.evidence.subject import foreign_systems, name_parts, named_system, system_names
from app.evidence.wording import named_fields, phrase_words, said_words, words
from app.evidence.zero import quiet_spans, without_zero_counts
from app.rag.services import LARGER_SYSTEM
from app.rag.signals import read_signals
from app.rca.service_matching import mentions


def families(docs: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    """Docs grouped by family, in the order of each family's best-ranked doc."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for doc in docs:
        meta = doc.get("metadata") or {}
        key = str(meta.get("error_code") or doc.get("id"))
        groups.setdefault(key, []).append(doc)
    return list(groups.values())


def merged_signals(group: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The expected signals of a family: the union over its chunks."""
    merged: dict[str, list[str]] = {}
    for doc in group:
        for kind, values in read_signals(doc.get("metadata") or {}).items():
            merged[kind] = unique([*merged.get(kind, []), *values])
    return merged


@lru_cache(maxsize=1024)
def _doc_words(content: str) -> frozenset[str]:
    """A doc's words, read once per doc text (every incident compares with the same docs)."""
    return frozenset(words(content))


def _asks_a_known_system(command: str, claimed: frozenset[str]) -> bool:
    """Whether a pasted command names a system with a part of a family's service's name."""
    return any(claimed & set(name_parts(n)) for n in system_names(command))


class MatchContext:
    """What every candidate is compared with: the observations and the candidates' names."""

    def __init__(self, observed: IncidentSignals, groups: Sequence[Sequence[Mapping[str, Any]]]):
        self.observed = observed
        self.signals = [merged_signals(g) for g in groups]
        counts: dict[str, int] = {}
        for signals in self.signals:
            for word in {w for p in signals.get("phrases", []) for w in words(p)}:
                counts[word] = counts.get(word, 0) + 1
        self.phrase_df = counts
        # The field names the families' error bodies name ("quantity", "total"): a path
        # ending in one names that field, not its container.
        self.fields = {
            phrase[0]
            for signals in self.signals
            for p in signals.get("phrases", [])
            if len(phrase := words(p)) == 1
        }
        # What each piece says, read only for a piece a phrase is found in.
        self._said: dict[str, tuple[str, ...]] = {}
        self._unquiet: dict[str, tuple[str, ...]] = {}
        # The docs' own words: a capability or a field a doc names is not another system's.
        self.known = known = frozenset().union(
            *(_doc_words(str(d.get("content") or "")) for g in groups for d in g)
        )
        # The fields a failing validation error names, when none is one a family names: a 422
        # on ``customer.email`` is none of the 422 families'. A field a doc writes of in other
        # words ("currency code mismatch") is that doc's.
        named_at: dict[str, list[str]] = {}
        for i in observed.items:
            if i.id in observed.failing_records:
                for f in named_fields(i.text):
                    named_at.setdefault(f, []).append(i.id)
        named = list(named_at)
        unknown = not any(
            set(parts) & self.fields or set(parts) <= known for f in named if (parts := words(f))
        )
        self.other_fields = named if unknown else []
        # A named field only one doc writes of, and no family's error body names ("currency"
        # in the amount family's "currency code mismatch"): the records say it is that one.
        doc_words = {
            str(g[0].get("id")): frozenset().union(
                *(_doc_words(str(d.get("content") or "")) for d in g)
            )
            for g in groups
        }
        self.field_docs: dict[str, tuple[str, list[str]]] = {}
        for f, ids in named_at.items():
            field_words = set(words(f))
            owners = [doc for doc, ws in doc_words.items() if field_words and field_words <= ws]
            if len(owners) == 1 and not field_words & self.fields:
                self.field_docs[f] = (owners[0], ids)
        self.codes = {
            normal_code(str((g[0].get("metadata") or {}).get("error_code")))
            for g in groups
            if (g[0].get("metadata") or {}).get("error_code")
        }
        self.all_services = {s for signals in self.signals for s in signals.get("services", [])}
        #: Each declared service name or alias, and the name its family's doc gives first
        #: (``webshop-checkout`` is ``checkout-service``).
        self.canonical = {
            s: names[0]
            for signals in self.signals
            if (names := signals.get("services"))
            for s in names
        }
        # The failing records that name a system of a capability none of the docs covers.
        claimed = frozenset(p for name in self.all_services for p in telling_parts(name))
        #: Every piece's text by its evidence id.
        self.texts = texts = {i.id: i.text for i in observed.items}
        #: Every piece by its evidence id.
        self.by_id = {i.id: i for i in observed.items}
        # A record that names no system is the system's its pasted command asked
        # (``$ curl -v http://recommendation-service:8080/…``, then ``< HTTP/1.1 503``).
        self.foreign: dict[str, list[str]] = {
            record: names
            for record in observed.failing_records
            if (
                names := foreign_systems(texts.get(record, ""), known, claimed)
                or (
                    foreign_systems(observed.commands[record], known, claimed)
                    if record in observed.commands
                    and not system_names(texts[record])
                    and not _asks_a_known_system(observed.commands[record], claimed)
                    else []
                )
            )
        }
        # The kind of failure each exception seen says, by its name or its message: the same
        # for every candidate, so read once.
        self.exception_kinds: dict[Observation, str | None] = {
            o: exception_kind_in(texts.get(o.evidence_id, ""), o.value)
            for o in observed.of(EXCEPTION)
        }
        # With no ``service`` field, the causal log record's own service (or else the one
        # system the records name: ``container=recommender``, ``host: "wiki.corp"``) speaks
        # for the incident -- but only when the evidence names no service the candidates know.
        #: The ``service`` field as the candidates' docs declare it (``till-api-v2`` is the
        #: ``till-api``, ``chiler-monitor`` the ``chiller-monitor``), unless it names only the
        #: larger system a known service is part of (``web-shop`` for ``web-shop-checkout``):
        #: that says where to look, not which of its services fails.
        reported = observed.service
        if reported:
            reported = known_service(reported, self.all_services) or reported
        self.service = reported if reported and not self._umbrella(reported, groups) else None
        self.reporter: tuple[str, str] | None = None
        if self.service:
            self.reporter = (self.service, SERVICE_FIELD)
        elif (
            stand_in := observed.inferred_service
            or observed.workload
            or self._site(groups)
            or self._named_system()
        ) and not any(
            mentions(item, name) for name in self.all_services for item in observed.items
        ):
            where = next(
                (i.id for i in observed.items if stand_in in i.text.lower()),
                "incident:message",
            )
            self.reporter = (stand_in, where)

    def _umbrella(self, service: str, groups: Sequence[Sequence[Mapping[str, Any]]]) -> bool:
        """Whether ``service`` is the larger system a known service is part of (``web-shop``).

        Read against the retrieved families' services and, through the retrieval's
        ``service_match`` ("part"), against every service the knowledge base declares: a
        report from the web shop about stock retrieves the inventory family, not checkout's.
        """
        marked = any(
            (doc.get("why") or {}).get("service_match") == LARGER_SYSTEM
            for group in groups
            for doc in group
        )
        return marked or is_larger_system(service, self.all_services)

    def unquiet(self, item: EvidenceText) -> tuple[str, ...]:
        """The words of a piece outside its quiet readings, read once.

        "lines=4 (baseline 5), total=7 (baseline 8)" holds the words "lines" and "total" only
        in counts at their usual level: no record of either failure.
        """
        if item.id not in self._unquiet:
            quiet = quiet_spans(item.text)
            self._unquiet[item.id] = (
                phrase_words(without_zero_counts(item.text)) if quiet else item.words
            )
        return self._unquiet[item.id]

    def said(self, item: EvidenceText) -> tuple[str, ...]:
        """``said_words`` of one piece, read once."""
        if item.id not in self._said:
            self._said[item.id] = said_words(item.text, self.fields)
        return self._said[item.id]

    def _named_system(self) -> str | None:
        """A well-known product the prose says is in trouble, unless a family covers it."""
        message = next((i.text for i in self.observed.items if i.id == "incident:message"), "")
        system = named_system(message)
        return None if system is None or system in self.all_services else system

    def _site(self, groups: Sequence[Sequence[Mapping[str, Any]]]) -> str | None:
        """The site a proxy served, unless a request path names a candidate's component.

        A shared front door (``host: "gw.store.corp"``) serves ``/chiller/…`` as well as
        ``/checkout``: where a record's path has a segment the candidates' ``Component`` lines
        or service names use, the path says what was asked, and the host says nothing.
        """
        if self.observed.site is None:
            return None
        known = {
            w
            for group in groups
            for doc in group
            for w in words(str((doc.get("metadata") or {}).get("component") or ""))
        }
        known |= {p for name in self.all_services for p in telling_parts(name)}
        segments = {
            w for o in self.observed.of(PATH) if o.source != MESSAGE for w in words(o.value)
        }
        return None if segments & (known - GENERIC_NAME_PARTS) else self.observed.site
