"""Service names reduced to the service: pods, StatefulSet ordinals and rollout tracks."""

from __future__ import annotations

import pytest

from app.evidence.services import service_name
from app.evidence.signals import observe_incident
from app.rag.ingest import KnowledgeChunk
from app.rag.services import MATCH, ServiceCatalogue, service_match


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("inventory-service-5f7c9d8b4-x2k9q", "inventory-service"),
        ("payment-client-6c8-7bq2x", "payment-client"),
        ("Pos-API-7d9f8c6b5d-qwert", "pos-api"),
        ("redis-0", "redis"),
        ("plu-service-canary", "plu-service"),
        ("plu-service-canary-7d9f", "plu-service"),
        ("inventory-service-blue-abcd", "inventory-service-blue-abcd"),
        ("checkout_green", "checkout"),
        # However people write one name.
        ("Inventory Service", "inventory-service"),
        ("inventory_service", "inventory-service"),
        ("InventoryService", "inventory-service"),
        # Qualified with where it runs: a namespace, a kind, an environment, the cluster's DNS.
        ("shop/checkout-service", "checkout-service"),
        ("pos/pos-api", "pos-api"),
        ("pod/inventory-service-7c8d9b6f5-tl2mx", "inventory-service"),
        ("deployment/pos-api", "pos-api"),
        ("inventory-service-prod", "inventory-service"),
        ("pos-api.staging", "pos-api"),
        ("plu-service.shop.svc.cluster.local", "plu-service"),
        ("inventory-service-prod-5f7c9d8b4-x2k9q", "inventory-service"),
        ("pos-api-7c9d-4kq2x", "pos-api"),
        # A region it is deployed to.
        ("pos-backend-eu", "pos-backend"),
        ("inventory-api-eu-west-1", "inventory-api"),
        # Names that only look like instances stay as they are.
        ("pos-api", "pos-api"),
        ("web-proxy", "web-proxy"),
        ("payments-v2", "payments-v2"),
        ("node-exporter", "node-exporter"),
        ("  ", None),
        (None, None),
    ],
)
def test_service_name(raw: str | None, expected: str | None) -> None:
    assert service_name(raw) == expected


def test_a_pod_name_matches_its_services_doc_and_is_the_observed_service() -> None:
    chunk = KnowledgeChunk("doc-1", "Error: INV-503", {"service": "inventory-service"})
    catalogue = ServiceCatalogue.from_chunks([chunk])
    pod = "inventory-service-5f7c9d8b4-x2k9q"
    assert catalogue.knows(pod) and catalogue.chunks_for(pod) == [chunk]
    assert service_match(pod, chunk.metadata, catalogue) == MATCH
    observed = observe_incident({"message": "lookups failing with 503", "service": pod})
    assert observed.service == "inventory-service"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("inventroy-service", "inventory-service"),
        ("chiler-monitor", "chiller-monitor"),
        ("til-api", "till-api"),
        ("payment-servce", "payment-service"),
        # A release after the name is the same service.
        ("till-api-v2", "till-api"),
        ("payments-v3", "payments"),
        ("pos-api", "pos-api"),
        # Another system, or a short part one letter off another name, is not.
        ("loyalty-api", None),
        ("plu-app", None),
        ("pos-app", None),
    ],
)
def test_a_typed_service_reads_as_the_declared_name_it_means(typed: str, meant: str | None) -> None:
    from app.evidence.services import known_service

    declared = [
        "inventory-service",
        "inventory",
        "pos-api",
        "pos",
        "till-api",
        "plu-service",
        "plu",
        "plu-api",
        "chiller-monitor",
        "payment-service",
        "payments",
        "card-gateway",
    ]
    assert known_service(typed, declared) == meant
