"""Where a family runs: a service named in the evidence, and the family's callers.

``mentions`` says whether a piece of the incident names a service (a log's logger, a pod, a
``kubectl`` prefix, a URL's host; the reporter's prose only for hyphenated names, and not where
it rules the service out); ``neighbour_words`` and ``is_neighbour`` read who reaches a family
from its doc's ``Component`` line ("called by checkout", "behind the API gateway").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.evidence.services import (
    KINDS,
    POD_SUFFIX,
    service_name,
    telling_parts,
)
from app.evidence.signals import MESSAGE, SERVICE_FIELD, STACK, EvidenceText, url_hosts
from app.evidence.wording import words

_NAME_PATTERNS: dict[str, re.Pattern[str]] = {}
#: An environment or rollout track after a service's name: ``inventory-api-prod``,
#: ``plu-service-canary``.
#: A StatefulSet pod's or a numbered instance's ordinal: ``pos-card-gateway-2``.
_ORDINAL = r"-\d{1,3}"
_DEPLOYMENT_SUFFIX = (
    r"-(?:prod|production|prd|live|staging|stage|stg|canary|stable|primary|blue|green)"
)


def name_pattern(name: str) -> re.Pattern[str]:
    """How evidence writes service ``name``: itself, a deployment or pod of it, or a reference.

    ``inventory_api`` (an HAProxy backend, a configuration key) is ``inventory-api`` written
    with the other separator.
    """
    pattern = _NAME_PATTERNS.get(name)
    if pattern is None:
        # A Deployment's pod (``checkout-service-7c4d9-kq2mz``) names its service too, and so
        # does a Kubernetes object reference (``pod/…``, ``deployment/…``; ``kubectl logs``
        # prefixes ``[pod/<pod>/<container>]``), where a path segment does not.
        # The name comes first so the engine scans for it as a literal; what stands before it
        # is checked once it is found (each lookbehind has a fixed width: the name's own).
        literal = re.escape(name).replace(r"\-", "[-_]")
        before = "|".join(
            [rf"(?<=(?<![a-z0-9_./-]){literal})"]
            + [rf"(?<=\b{kind}/{literal})" for kind in sorted(KINDS)]
        )
        pattern = re.compile(
            rf"{literal}(?:{before})(?:{_DEPLOYMENT_SUFFIX})?(?:{POD_SUFFIX}|{_ORDINAL})?"
            rf"(?:(?![a-z0-9_/-])|(?=/[a-z0-9_-]+\]))"
        )
        _NAME_PATTERNS[name] = pattern
    return pattern


def mentions(item: EvidenceText, name: str) -> bool:
    """Whether a piece of evidence names the service ``name``.

    The reporter's prose counts only for hyphenated names (``pos-api``): ``checkout`` or
    ``payments`` in a sentence is a word, not a system; and not where it names the service to
    rule it out ("pos-api is healthy", "not pos-api"). Path segments do not count, except a
    stack frame's source folder named after a hyphenated service (``/app/pos_api/handler.py``):
    that is the code that ran, while a URL's path only says what was asked.
    """
    if item.id == SERVICE_FIELD:
        return service_name(item.text) == name
    if item.source == MESSAGE and "-" not in name:
        return False
    text = item.text.lower()
    if name in url_hosts(text):
        return True
    if item.source == STACK and "-" in name and f"/{name.replace('-', '_')}/" in text:
        return True
    if item.source == MESSAGE:
        # "inventory-service looks fine, the price lookups fail": named to rule it out.
        return any(not named_to_rule_out(text, m) for m in name_pattern(name).finditer(text))
    return bool(name_pattern(name).search(text))


#: After a service named in prose: it is said to be well ("is fine", "looks healthy",
#: "return 200"), or its own trouble over ("crash loop from last night is fixed").
_WELL_AFTER_RE = re.compile(
    r"(?:'s|\s+itself|\s+(?:itself\s+)?(?:is|are|looks|seems|was|stays|remains))\s+(?:\w+\s+)?"
    r"(?:fine|healthy|ok|okay|up|green|unaffected|normal|good|working)\b"
    r"|\s+(?:returns?|returned|answers?|answered|responds?|responded)\s+(?:with\s+)?"
    r"(?:200|2xx|ok)\b"
    r"|(?:\s+(?!(?:but|and|when|while|because|after|until)\b)[\w-]+){0,5}?"
    r"\s+(?:is|was|has been)\s+(?:now\s+)?(?:fixed|resolved|recovered)\b"
)
#: Before a service named in prose: it is denied ("not pos-api", "nothing wrong with pos-api").
_DENIED_BEFORE_RE = re.compile(
    r"(?:\bnot|n't|\bno issues? with|\bnothing wrong with)\s+(?:the\s+)?$"
)


def named_to_rule_out(text: str, match: re.Match[str]) -> bool:
    """Whether the reporter names a service only to say it is not the one failing."""
    return bool(
        _WELL_AFTER_RE.match(text, match.end())
        or _DENIED_BEFORE_RE.search(text[max(0, match.start() - 24) : match.start()])
    )


#: In a Component line, what introduces the family's callers and neighbours: "called by
#: checkout", "behind the API gateway", "used by the POS API".
_RELATION_RE = re.compile(
    r"\b(?:(?:called|used|reached|fronted|consumed|proxied)\s+by|behind|in\s+front\s+of|via)"
    r"\b([^,;()\n]*)",
    re.IGNORECASE,
)


def neighbour_words(group: Sequence[Mapping[str, Any]]) -> set[str]:
    """The words that name a family's callers and neighbours.

    An entry's ``Component`` line says what the family is and who reaches it; only the words
    after a relation ("called by", "used by", "behind", "via") name a neighbour. The rest of
    the doc mentions other systems in passing ("no card or payment traffic involved", "the
    network path") and names the family's own component ("till checkout endpoint"), neither
    of which makes the incident's service a neighbour. A doc without a ``Component`` field (a
    Markdown runbook) offers all of its words.
    """
    found: set[str] = set()
    for doc in group:
        component = str((doc.get("metadata") or {}).get("component") or "")
        if component:
            found.update(w for m in _RELATION_RE.finditer(component) for w in words(m.group(1)))
        else:
            found.update(words(str(doc.get("content") or "")))
    return found


def is_neighbour(service: str, neighbours: set[str]) -> bool:
    """Whether ``service`` is a caller or neighbour of the family (``neighbour_words``).

    Every telling part of the name must be a neighbour word: ``checkout-service`` for the
    payment family "called by checkout", ``api-gateway`` for a family "behind the API gateway".
    """
    parts = telling_parts(service)
    return bool(parts) and all(p in neighbours for p in parts)


def is_own_side(service: str, names: Sequence[str]) -> bool:
    """Whether ``service`` is the family's own system under another suffix (``plu-client``).

    Its telling parts are those of the family's service name, only the generic part differs:
    the PLU family's ``plu-service`` is called through a ``plu-client``, the payment family's
    through a ``payment-worker``. Not an alias's parts, nor one of several (``api-gateway`` is
    not ``pos-card-gateway``'s).
    """
    parts = set(telling_parts(service))
    return bool(names) and bool(parts) and parts == set(telling_parts(names[0]))
