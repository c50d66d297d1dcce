"""The inbox at team scale, in real Chromium: 250 incidents seeded through the service.

Every incident is reachable by scrolling (no cap), the search counts are the API's, the
grouped view counts the groups, ``j``/``k`` walk the list and "approve and next" moves on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from tests.helpers import ServiceProcess, unique_name
from tests.ui.conftest import READY_TIMEOUT_SECONDS, require_browser
from tests.ui.helpers import API_KEYS_SPEC, Api
from tests.ui.seeding import seed

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip, or fail under CI=true, with the reason
    Page = Any  # type: ignore[misc,assignment]
    expect = None  # type: ignore[assignment]

pytestmark = pytest.mark.slow

COUNT = 250
SERVICES = 10


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """A real server over a state dir holding 250 incidents (ids oldest first)."""
    require_browser()
    state_dir = tmp_path_factory.mktemp("ui-scale-state")
    ids = seed(state_dir, COUNT, SERVICES)
    process = ServiceProcess(
        {
            "RCA_STATE_DIR": str(state_dir),
            "RCA_COLLECTION_NAME": unique_name("ui-scale"),
            "RCA_AUTH": "on",
            "RCA_API_KEYS": API_KEYS_SPEC,
            "RCA_RATE_LIMIT_PER_MINUTE": "100000",
        }
    ).start(timeout=READY_TIMEOUT_SECONDS)
    try:
        yield process.base_url, ids
    finally:
        process.stop()


@pytest.fixture(scope="module")
def server(seeded: tuple[str, list[str]]) -> str:
    """The seeded server (the conftest's ``page`` signs in against it)."""
    return seeded[0]


@pytest.fixture(scope="module")
def api(server: str) -> Api:
    return Api(server)


def listed(api: Api, **params: Any) -> dict[str, Any]:
    with api.client() as http:
        response = http.get("/api/incidents", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def scroll_to_the_end(page: Page) -> None:
    """Scroll the inbox until its last page is loaded."""
    end = page.locator("#inbox-list .inbox-end")
    for _ in range(COUNT):
        if end.count():
            return
        page.locator("#inbox").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_timeout(150)
    raise AssertionError("the inbox never reached its end")


def test_scrolling_reaches_the_oldest_of_250(
    page: Page, server: str, api: Api, seeded: tuple[str, list[str]]
) -> None:
    oldest = seeded[1][0]
    counts = listed(api, limit=1)["counts"]
    assert counts["awaiting_review"] >= COUNT
    expect(page.locator("#inbox-shown")).to_have_text(
        f"Showing 50 of {counts['awaiting_review']} incident(s)"
    )
    expect(page.locator("#inbox-status option[value=awaiting_review]")).to_have_text(
        f"Awaiting review ({counts['awaiting_review']})"
    )
    scroll_to_the_end(page)
    rows = page.locator("a.inbox-item")
    expect(rows).to_have_count(counts["awaiting_review"])
    ids = rows.evaluate_all("els => els.map(e => e.dataset.id)")
    assert len(set(ids)) == len(ids) and ids[-1] == oldest
    rows.last.click()
    expect(page.locator(f".incident-layout[data-id='{oldest}']")).to_be_visible()
    expect(page.locator("#incident-message")).to_contain_text("batch000")


def test_search_shows_the_api_counts(page: Page, api: Api) -> None:
    expected = listed(api, q="tenant3", status="awaiting_review")
    page.fill("#inbox-filter", "tenant3")
    expect(page.locator("#inbox-shown")).to_have_text(
        f"Showing {expected['total']} of {expected['total']} incident(s)"
    )
    rows = page.locator("a.inbox-item")
    expect(rows).to_have_count(expected["total"])
    assert expected["total"] == len([n for n in range(COUNT) if n % 7 == 3])
    assert set(rows.evaluate_all("els => els.map(e => e.dataset.id)")) == {
        i["id"] for i in expected["items"]
    }
    page.fill("#inbox-filter", "batch123")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("batch123")


def test_grouped_view_counts_the_groups(page: Page, api: Api) -> None:
    grouped = listed(api, grouped="true", status="awaiting_review")
    page.check("#inbox-grouped")
    rows = page.locator("a.inbox-item.is-group")
    expect(rows).to_have_count(SERVICES)
    assert grouped["total"] == SERVICES
    sizes = rows.evaluate_all("els => els.map(e => Number(e.dataset.groupSize))")
    assert sum(sizes) == grouped["counts"]["awaiting_review"]
    assert sorted(sizes) == sorted(i["group_size"] for i in grouped["items"])
    rows.first.click()
    expect(page).to_have_url(re.compile(r"#/groups/"))
    expect(page.locator("#group-count")).to_contain_text(f"{sizes[0]} similar incident(s)")
    expect(page.locator("table.members tbody tr")).to_have_count(sizes[0])


def test_j_and_k_walk_the_inbox_and_approve_and_next_moves_on(
    page: Page, server: str, api: Api
) -> None:
    expect(page.locator("a.inbox-item").first).to_be_visible()
    first, second, third = page.locator("a.inbox-item").evaluate_all(
        "els => els.slice(0, 3).map(e => e.dataset.id)"
    )
    page.locator("#main").focus()
    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(f"#/incidents/{first}$"))
    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(f"#/incidents/{second}$"))
    page.keyboard.press("k")
    expect(page).to_have_url(re.compile(f"#/incidents/{first}$"))
    expect(page.locator(f".incident-layout[data-id='{first}']")).to_be_visible()

    page.keyboard.press("Shift+A")  # approve and next
    expect(page).to_have_url(re.compile(f"#/incidents/{second}$"))
    expect(page.locator(f".incident-layout[data-id='{second}']")).to_be_visible()
    assert api.get(first)["status"] == "approved"
    assert [e["type"] for e in api.audit(first)].count("decision") == 1
    page.click("#decide-approve-next")
    expect(page).to_have_url(re.compile(f"#/incidents/{third}$"))
    assert api.get(second)["decision"]["reviewer"] == "ana"
