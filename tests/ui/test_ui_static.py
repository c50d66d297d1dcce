"""The reviewer UI's static files are safe by construction, and served with strict headers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api.routes import ui

UI_DIR = Path(ui.__file__).resolve().parents[2] / "ui"
HTML_FILES = sorted(UI_DIR.rglob("*.html"))
JS_FILES = sorted(UI_DIR.rglob("*.js"))

INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.IGNORECASE)
# Any way of turning a string into markup or code.
HTML_SINKS = re.compile(
    r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new\s+Function\s*\("
    r"|setAttribute\(\s*['\"]on|javascript:"
)


def test_the_ui_has_files() -> None:
    assert [p.name for p in HTML_FILES] == ["index.html"]
    assert {"app.js", "api.js"} <= {p.name for p in JS_FILES}


@pytest.mark.parametrize("path", HTML_FILES, ids=lambda p: p.name)
def test_html_has_a_title_and_no_inline_script_or_handler(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert re.search(r"<title>[^<]+</title>", text), "every page needs a <title>"
    assert not INLINE_HANDLER.search(text), "no inline event handler attributes"
    for tag in re.findall(r"<script\b[^>]*>", text, flags=re.IGNORECASE):
        assert "src=" in tag, f"inline <script> block: {tag}"
    assert not re.search(r"<script\b[^>]*>\s*[^<\s]", text), "scripts come from files only"
    assert "style=" not in text, "no inline styles (the CSP allows styles from files only)"
    assert "javascript:" not in text


@pytest.mark.parametrize("path", JS_FILES, ids=lambda p: p.name)
def test_scripts_never_parse_strings_as_html(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not HTML_SINKS.findall(text), "build DOM with createElement/textContent only"
    # Handlers are attached with addEventListener only: no `on…=` in markup strings or as
    # `el.onclick = …` properties.
    assert not INLINE_HANDLER.search(text), "use addEventListener"


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    app.include_router(ui.router)
    return TestClient(app)


def test_index_is_served_with_a_strict_csp(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "'unsafe-inline'" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "<title>" in response.text


@pytest.mark.parametrize(
    ("name", "media_type"),
    [("app.js", "text/javascript"), ("api.js", "text/javascript"), ("style.css", "text/css")],
)
def test_static_files_are_served_with_their_type(
    client: TestClient, name: str, media_type: str
) -> None:
    response = client.get(f"/static/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(media_type)
    assert response.text == (UI_DIR / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "name", ["nope.js", "..%2Fapi%2Froutes%2Fui.py", "%2e%2e/main.py", "../../main.py", "x.py"]
)
def test_static_refuses_anything_outside_the_ui(client: TestClient, name: str) -> None:
    response = client.get(f"/static/{name}")
    assert response.status_code == 404
    assert "from __future__" not in response.text


def test_static_file_resolution_stays_inside_the_ui_folder() -> None:
    assert ui.static_file("app.js") == UI_DIR / "app.js"
    assert ui.static_file("../main.py") is None
    assert ui.static_file("../api/routes/ui.py") is None
    assert ui.static_file("") is None
    assert ui.static_file(".hidden.js") is None
