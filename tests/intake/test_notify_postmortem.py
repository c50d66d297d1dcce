"""The decision notification links the postmortem beside the incident."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import unique_name
from tests.intake.helpers import Receiver

from app.core.config import Settings
from app.intake.notify.messages import (
    NotificationKind,
    incident_url,
    postmortem_url,
    render_message,
)
from app.main import create_app
from app.sample_app import crash_checkout
from app.schemas import IncidentPublic, IncidentStatus

UI = "http://rca.example:8000"


def decided_incident() -> IncidentPublic:
    return IncidentPublic(
        id="inc-7",
        status=IncidentStatus.APPROVED,
        incident={"event": "CheckoutErrors", "service": "checkout", "message": "500s"},
        rca={"summary": "draft", "confidence": "high"},
        final_rca={"summary": "Checkout divides by zero for empty baskets.", "confidence": "high"},
        decision={"action": "approve", "reviewer": "ana", "comment": "matches the traceback"},
        created_at="2026-11-29T10:00:00+00:00",
        updated_at="2026-11-29T10:20:00+00:00",
    )


def test_the_decided_message_carries_both_links_the_reviewer_comment_and_summary() -> None:
    body = render_message(decided_incident(), NotificationKind.DECIDED, UI)
    assert postmortem_url(UI, "inc-7") == f"{UI}/#/incidents/inc-7/postmortem"
    assert body["text"] == (
        "RCA approved by ana: CheckoutErrors on checkout. "
        "Checkout divides by zero for empty baskets. "
        f"{UI}/#/incidents/inc-7 Postmortem: {UI}/#/incidents/inc-7/postmortem"
    )
    buttons = body["blocks"][2]["elements"]
    assert [(b["text"]["text"], b["url"]) for b in buttons] == [
        ("Open in RCA", incident_url(UI, "inc-7")),
        ("Postmortem", postmortem_url(UI, "inc-7")),
    ]
    assert "matches the traceback" in body["blocks"][1]["elements"][0]["text"]


@pytest.mark.parametrize("kind", [NotificationKind.REVIEW_READY, NotificationKind.REMINDER])
def test_undecided_messages_have_no_postmortem_link(kind: NotificationKind) -> None:
    pending = decided_incident().model_copy(update={"status": IncidentStatus.AWAITING_REVIEW})
    body = render_message(pending, kind, UI)
    assert "postmortem" not in body["text"].lower()
    assert all(
        "postmortem" not in str(element.get("url"))
        for block in body["blocks"]
        for element in block.get("elements", [])
    )


@pytest.fixture
def app_client(tmp_path: Path, receiver: Receiver) -> Iterator[TestClient]:
    settings = Settings(
        state_dir=tmp_path / "state",
        collection_name=unique_name("kb"),
        auth="off",
        notify_webhook_url=SecretStr(receiver.url),
        ui_base_url=UI,
        _env_file=None,  # type: ignore[call-arg]
    )
    with TestClient(create_app(settings)) as client:
        yield client


def test_a_real_decision_notification_links_a_postmortem_that_exists(
    app_client: TestClient, receiver: Receiver
) -> None:
    created = app_client.post("/api/incidents", json=crash_checkout()).json()
    receiver.wait_for(1)
    decided = app_client.post(
        f"/api/incidents/{created['id']}/decision",
        json={"action": "approve", "comment": "matches the traceback"},
    )
    assert decided.status_code == 200
    ready, done = receiver.wait_for(2)[:2]
    link = postmortem_url(UI, created["id"])
    assert link not in ready["text"] and f"Postmortem: {link}" in done["text"]
    assert app_client.get(f"/api/incidents/{created['id']}/postmortem").status_code == 200
