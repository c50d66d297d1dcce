"""The postmortem panel: copy and download the Markdown postmortem of a decided incident."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.ui.helpers import Api

from app.sample_app import crash_checkout

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip, or fail under CI=true, with the reason
    Page = Any  # type: ignore[misc,assignment]
    expect = None  # type: ignore[assignment]

pytestmark = pytest.mark.slow


def decided_incident(api: Api) -> str:
    created = api.create(crash_checkout())
    decided = api.decide(
        created["id"], {"action": "approve", "reviewer": "ana", "comment": "matches the traceback"}
    )
    assert decided.status_code == 200, decided.text
    return str(created["id"])


def test_no_postmortem_panel_before_the_decision(page: Page, server: str, api: Api) -> None:
    created = api.create(crash_checkout())
    page.goto(f"{server}/#/incidents/{created['id']}")
    expect(page.locator("#incident-heading")).to_be_visible()
    expect(page.locator("#postmortem")).to_have_count(0)


def test_download_postmortem_saves_the_markdown(
    page: Page, server: str, api: Api, tmp_path: Path
) -> None:
    incident_id = decided_incident(api)
    page.goto(f"{server}/#/incidents/{incident_id}")
    with page.expect_download() as download_info:
        page.locator("#postmortem-download").click()
    download = download_info.value
    assert download.suggested_filename == f"postmortem-{incident_id}.md"
    saved = tmp_path / "postmortem.md"
    download.save_as(saved)
    text = saved.read_text()
    assert text.startswith("# Postmortem: CO-500 on checkout-service")
    assert "Approved the RCA — “matches the traceback” | ana |" in text
    expect(page.locator("#postmortem-status")).to_have_text(
        f"Downloaded postmortem-{incident_id}.md."
    )


def test_the_notification_link_opens_the_panel_and_copy_fills_the_clipboard(
    page: Page, server: str, api: Api, browser_context: Any
) -> None:
    browser_context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    incident_id = decided_incident(api)
    page.goto(f"{server}/#/incidents/{incident_id}/postmortem")
    copy = page.locator("#postmortem-copy")
    expect(copy).to_be_focused()
    copy.click()
    expect(page.locator("#postmortem-status")).to_have_text(
        "Copied the postmortem (Markdown) to the clipboard."
    )
    clipboard = page.evaluate("navigator.clipboard.readText()")
    assert clipboard.startswith("# Postmortem: CO-500 on checkout-service")
    assert "## Root cause" in clipboard and "[^1]:" in clipboard
