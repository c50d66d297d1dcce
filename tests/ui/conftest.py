"""End-to-end fixtures for the reviewer UI: a real uvicorn process and a real headless Chromium.

One server per session and one browser per module keep the suite fast; every test opens a
fresh page and creates the incidents it needs through the API. Without Playwright or Chromium
the browser tests skip with the reason, except under ``CI=true``, where they fail: CI must run
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import ServiceProcess, skip_or_fail, unique_name
from tests.ui.helpers import API_KEYS_SPEC, KEYS, Api

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
READY_TIMEOUT_SECONDS = 180


def require_browser() -> None:
    """Skip (or, under CI=true, fail) when Playwright or Chromium is missing."""
    problems = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("Python Playwright is not installed (pip install playwright)")
    if not CHROMIUM.exists():
        problems.append(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    if problems:
        skip_or_fail("reviewer UI e2e tests need a browser: " + "; ".join(problems))


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real uvicorn process on a free port with its own state dir and collection.

    One for the session: every test creates the incidents it needs and finds them by id.
    """
    require_browser()
    process = ServiceProcess(
        {
            "RCA_STATE_DIR": str(tmp_path_factory.mktemp("ui-state")),
            "RCA_COLLECTION_NAME": unique_name("ui"),
            "RCA_AUTH": "on",
            "RCA_API_KEYS": API_KEYS_SPEC,
            # Many page loads and polls per minute from one key: no rate limit in these tests.
            "RCA_RATE_LIMIT_PER_MINUTE": "100000",
        }
    ).start(timeout=READY_TIMEOUT_SECONDS)
    try:
        yield process.base_url
    finally:
        process.stop()


@pytest.fixture(scope="module")
def api(server: str) -> Api:
    return Api(server)


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Debian Chromium with a fresh profile, driven by Python Playwright."""
    require_browser()
    from playwright.sync_api import expect, sync_playwright

    # Generous waits: a slow machine must not fail a test; nothing here asserts a timing.
    expect.set_options(timeout=30_000)

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1440, "height": 1000},
        )
        context.set_default_timeout(30_000)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser_context: Any, server: str) -> Iterator[Any]:
    """A fresh tab signed in as ana; fails the test on any script error or CSP violation."""
    tab = browser_context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    tab.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    # Signed in as reviewer ana: her key is in localStorage before the app first loads.
    tab.goto(f"{server}/static/favicon.svg")
    tab.evaluate(
        "key => { localStorage.clear(); localStorage.setItem('rca.apiKey', key); }", KEYS["ana"]
    )
    tab.goto(f"{server}/")
    yield tab
    tab.close()
    assert not problems, problems
