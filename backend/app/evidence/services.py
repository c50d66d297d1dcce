"""Service names as incidents carry them: the deployed service, not one instance of it.

Alerts and on-call engineers often name a pod or a rollout track instead of the service:
``inventory-service-5f7c9d8b4-x2k9q`` (a Deployment's pod: pod-template hash, then a random
suffix), ``redis-0`` (a StatefulSet's ordinal), ``plu-service-canary`` (a rollout track); or
qualify it with where it runs: ``shop/checkout-service`` (a namespace), ``pod/pos-api-…`` or
``deployment/pos-api`` (a Kubernetes kind), ``inventory-service-prod`` or ``pos-api.staging``
(an environment), ``plu-service.shop.svc.cluster.local`` (the cluster's DNS name).
``service_name`` reduces such a name to the service it belongs to, so that the knowledge base's
``Service:`` names and the diagnosis see ``inventory-service`` and ``plu-service``. Only those
exact shapes are cut; spaces, underscores and CamelCase humps become hyphens, and any other
name is kept as written (lower-cased).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.evidence.distance import edit_distance

#: ``-<pod-template hash>-<pod suffix>``: the hash holds a digit (names rarely end in one).
POD_SUFFIX = r"-(?=[a-z0-9]*\d)[a-z0-9]{3,10}-[a-z0-9]{5}"
#: Kubernetes kinds written before a name (``pod/…``, ``deploy/…``).
KINDS = frozenset(
    "pod pods deployment deployments deploy statefulset sts replicaset rs daemonset ds "
    "service svc job cronjob".split()
)
#: The cluster's DNS name after a service: ``.shop.svc.cluster.local``, ``.shop.svc``.
_CLUSTER_DNS = re.compile(r"\.[a-z0-9-]+\.svc(?:\.cluster\.local)?\.?$")
#: Environments a name is deployed to: ``-prod``, ``.staging``.
_ENVIRONMENT = re.compile(
    r"[-_.](?:prod|production|prd|live|staging|stage|stg|dev|development|qa|test|uat|preprod"
    r"|sandbox)$"
)
_POD_SUFFIX = re.compile(POD_SUFFIX + "$")
#: Regions a service is deployed to: ``pos-backend-eu``, ``inventory-api-eu-west-1``. (A
#: version, ``payments-v2``, may be another system and stays.)
_REGION = re.compile(
    r"[-_.](?:eu|us|uk|emea|apac|amer|latam|(?:eu|us|ap)-(?:west|east|north|south|central)(?:-\d)?)$"
)
#: A StatefulSet pod's ordinal.
_ORDINAL = re.compile(r"-\d{1,3}$")
#: How people write one service's name: "Inventory Service", "inventory_service",
#: "InventoryService" are all ``inventory-service``.
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATOR = re.compile(r"[\s_]+")
#: Rollout tracks that run the same service side by side, with a pod's hash or not
#: (``plu-service-canary-7d9f``).
_TRACK = re.compile(
    r"[-_.](?:canary|stable|primary|baseline|blue|green|preview)(?:-(?=[a-z]*\d)[a-z0-9]{4,10})?$"
)
#: What an instance or a deployment adds behind a service's name, cut in this order.
_INSTANCE_SUFFIXES = (_POD_SUFFIX, _ORDINAL, _TRACK, _ENVIRONMENT, _REGION)


def service_name(raw: object) -> str | None:
    """The service a (possibly instance-qualified) name belongs to, lower-cased; None if blank.

    Examples: ``Inventory-Service-5f7c9d8b4-x2k9q`` → ``inventory-service``; ``redis-0`` →
    ``redis``; ``plu-service-canary`` and ``plu-service-canary-7d9f`` → ``plu-service``;
    ``pos-api`` stays ``pos-api``;
    ``Inventory Service``, ``inventory_service`` and ``InventoryService`` → ``inventory-service``.
    """
    written = str(raw or "").strip()
    if not written:
        return None
    # "shop/checkout-service", "pod/pos-api-…", "shop/deployment/pos-api": the last name.
    parts = [p for p in written.split("/") if p.strip() and p.strip().lower() not in KINDS]
    written = parts[-1].strip() if parts else written
    name = _SEPARATOR.sub("-", _CAMEL_HUMP.sub("-", written).lower()).strip("-")
    name = _CLUSTER_DNS.sub("", name)
    # "inventory-service-prod-5f7c9d8b4-x2k9q": the pod, then the environment.
    reduced = name
    for _ in range(2):
        for suffix in _INSTANCE_SUFFIXES:
            reduced = suffix.sub("", reduced)
    return reduced or name


#: Parts of a service name that say nothing about which system it is.
GENERIC_NAME_PARTS = frozenset(
    {"service", "svc", "api", "app", "server", "backend", "frontend", "web", "client", "worker"}
)


def telling_parts(service: str) -> list[str]:
    """The parts of a service's name that say which system it is (``plu`` of ``plu-client``)."""
    return [p for p in re.split(r"[-_.]", service.lower()) if p and p not in GENERIC_NAME_PARTS]


def is_larger_system(service: str, known: Iterable[str]) -> bool:
    """Whether ``service`` is no known service but the start of one's name.

    ``web-shop`` opens ``web-shop-checkout``: the larger system it is part of, which says where
    to look, not which of its services fails. Not a name with the telling parts of a known one
    (``chiller`` is ``chiller-service``'s), nor one that only shares a part (``api-gateway``
    is not ``pos-card-gateway``'s).
    """
    names = set(known)
    if service in names:
        return False
    parts = service.split("-")
    if set(telling_parts(service)) in [set(telling_parts(n)) for n in names]:
        return False
    return any(
        len(name.split("-")) > len(parts) and name.split("-")[: len(parts)] == parts
        for name in names
    )


#: A release written after a service's name: ``till-api-v2``, ``payments-v3``.
_VERSION = re.compile(r"[-_.]v\d+$")
#: A part of a name this long may carry one typo (``chiler``, ``inventroy``, ``til``); shorter
#: ones differ by a letter from other names (``api``, ``app``).
TYPO_PART_MIN = 4


def known_service(name: str, known: Iterable[str]) -> str | None:
    """The declared service a typed ``service`` value means, if exactly one fits.

    Itself; without a release suffix (``till-api-v2`` is the ``till-api``); or with one typo in
    one of its parts (``inventroy-service``, ``chiler-monitor``, ``til-api``,
    ``payment-servce``), every other part the same.

    Args:
        name: A service name as ``service_name`` reduced it.
        known: The declared service names and aliases.

    Returns:
        The declared name, or None when none or several fit.
    """
    names = set(known)
    for written in dict.fromkeys((name, _VERSION.sub("", name))):
        if written in names:
            return written
    parts = name.split("-")
    near = {
        candidate
        for candidate in names
        if len(their := candidate.split("-")) == len(parts)
        and sum(a != b for a, b in zip(parts, their, strict=True)) == 1
        and all(
            edit_distance(a, b, 1) == 1 and len(b) >= TYPO_PART_MIN
            for a, b in zip(parts, their, strict=True)
            if a != b
        )
    }
    return next(iter(near)) if len(near) == 1 else None


#: Ticketing, paging, chat and mail tools reports arrive through.
REPORTING_TOOLS = frozenset(
    "servicenow snow jira zendesk freshdesk helpdesk pagerduty opsgenie slack teams outlook "
    "gmail".split()
)
#: Words that name who takes a report, not what fails: a desk, a support queue or team, an
#: on-call rota, or one of the tools.
_CHANNEL_PARTS = REPORTING_TOOLS | frozenset(
    "desk servicedesk support noc soc oncall triage ops itops sre systems team squad "
    # The same desks in the stores' languages.
    "kundenservice kundendienst klantenservice kundservice kundeservice soporte assistenza "
    "suporte".split()
)
#: Parts that make a name a running system even beside a channel word ("support-api").
_SYSTEM_PARTS = frozenset(
    "api svc server gateway worker client adapter portal app web db bridge connector "
    "integration proxy exporter importer plugin sync".split()
)


def is_reporting_channel(name: str) -> bool:
    """Whether a ``service`` value names where the report came from, not a running system.

    An incident raised through the service desk or a store support line often carries
    ``service-desk``, ``store-support``, ``till-support``, ``store-ops`` or ``noc`` in its
    ``service`` field: that is the queue or team that took the call, and says nothing about
    which system fails. A name with a system part (``support-portal``) is a system.
    """
    parts = [p for p in re.split(r"[-_.\s]+", name.lower().replace("on-call", "oncall")) if p]
    return any(p in _CHANNEL_PARTS for p in parts) and not any(p in _SYSTEM_PARTS for p in parts)
