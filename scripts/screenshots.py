"""Screenshots of the reviewer UI for the docs: ``make screenshots``.

Starts the real app on a free local port with a throw-away state dir, files a few incidents
(the sample checkout crash, two till errors, one of them already approved, and a burst of
identical checkout alerts), and saves to ``docs/architecture/img/``: the inbox, an incident
with a citation opened (light and dark), the phone layout, the edit form and a group.
Needs Python Playwright (``pip install playwright``) and Debian's Chromium at /usr/bin/chromium;
no browser is downloaded.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "backend"))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

TILL_QUANTITY = {
    "error_code": "POS-422-QTY",
    "event": "SALE_REJECTED",
    "message": "sale rejected: quantity must be greater than 0",
    "logs": [
        "2026-11-29T09:58:12Z INFO  pos-api POST /pos/v1/sales store=0211 till=3",
        "2026-11-29T09:58:12Z ERROR pos-api 422 Unprocessable Entity: quantity must be greater "
        "than 0 (line 2)",
    ],
    "service": "pos-api",
}
TILL_AMOUNT = {
    "message": "store 0211 issues",
    "logs": [
        "WARN  till 3 receipt printer paper low",
        "ERROR sale rejected 422: total 10.00 != sum of lines 10.01",
    ],
    "service": "pos-api",
}


SHOTS = (
    "inbox.png",
    "incident.png",
    "incident-dark.png",
    "phone.png",
    "phone-evidence.png",
    "edit.png",
    "group.png",
)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def main() -> int:
    """Start the app, seed incidents, save the two screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "architecture" / "img")
    args = parser.parse_args()

    state_dir = Path(tempfile.mkdtemp(prefix="rca-screenshots-"))
    os.environ["RCA_STATE_DIR"] = str(state_dir)
    os.environ["RCA_COLLECTION_NAME"] = f"screenshots-{uuid.uuid4().hex[:8]}"
    # A throw-away app on 127.0.0.1: no API keys to set up.
    os.environ["RCA_AUTH"] = "off"
    os.environ["RCA_HOST"] = "127.0.0.1"

    import httpx
    import uvicorn
    from fastapi.routing import APIRoute
    from playwright.sync_api import sync_playwright

    from app.api.routes import ui
    from app.core.config import Settings
    from app.main import create_app
    from app.sample_app import crash_checkout

    app = create_app(Settings())
    if not any(isinstance(r, APIRoute) and r.path == "/" for r in app.routes):
        app.include_router(ui.router)  # until create_app includes the UI itself
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=120) as http:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if http.get("/ready").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the app never became ready")
                time.sleep(0.2)
            amount = http.post("/api/incidents", json=TILL_AMOUNT).json()
            http.post(
                f"/api/incidents/{amount['id']}/decision",
                json={"action": "approve", "reviewer": "ana", "comment": "matches the 422 body"},
            )
            http.post("/api/incidents", json=TILL_QUANTITY)
            crash = http.post("/api/incidents", json=crash_checkout()).json()
            for n in range(4):
                burst = {
                    **crash_checkout(),
                    "message": f"ZeroDivisionError in checkout (store {n})",
                }
                http.post("/api/incidents", json={**burst, "service": "webshop-checkout"})
            http.post(f"/api/incidents/{crash['id']}/assign", json={"assignee": "ana"})

        args.out.mkdir(parents=True, exist_ok=True)
        incident_url = f"{base}/#/incidents/{crash['id']}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )

            def new_page(scheme: str = "light", width: int = 1440, height: int = 960) -> Any:
                context = browser.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                context.add_init_script("localStorage.setItem('rca.reviewer', 'ana')")
                return context.new_page()

            def open_citation(page: Any) -> None:
                page.goto(incident_url)
                page.wait_for_selector("#rca")
                page.locator("button.cite[data-evidence-id^='error-doc-']").first.click()
                page.wait_for_selector("#evidence mark")
                page.locator("#rca h4", has_text="Hypotheses").scroll_into_view_if_needed()
                page.evaluate("document.getElementById('main').scrollTop -= 40")

            page = new_page()
            page.goto(f"{base}/#/")
            page.wait_for_selector("a.inbox-item")
            page.wait_for_selector("#poll-state[data-state=live]")
            page.screenshot(path=str(args.out / "inbox.png"))
            open_citation(page)
            page.screenshot(path=str(args.out / "incident.png"))
            page.click("#decide-edit")
            page.locator("#form-edit").scroll_into_view_if_needed()
            page.screenshot(path=str(args.out / "edit.png"))
            page.goto(f"{base}/#/")
            page.check("#inbox-grouped")
            page.locator("a.inbox-item.is-group").first.click()
            page.wait_for_selector("#group-decide")
            page.screenshot(path=str(args.out / "group.png"))

            dark = new_page("dark")
            open_citation(dark)
            dark.screenshot(path=str(args.out / "incident-dark.png"))

            phone = new_page("light", 390, 844)
            phone.goto(incident_url)
            phone.wait_for_selector("#rca")
            phone.screenshot(path=str(args.out / "phone.png"))
            phone.locator("button.cite[data-evidence-id^='error-doc-']").first.click()
            phone.wait_for_selector("#evidence mark")
            phone.screenshot(path=str(args.out / "phone-evidence.png"))
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=15)
    for name in SHOTS:
        print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
