"""The reviewer UI: ``/`` serves the page, ``/static/<file>`` its scripts and styles.

The UI is a handful of static files (vanilla JS modules and CSS, no build step) living in
``app/ui``. Files are served by explicit routes rather than a mount so the whole UI is one
router (``app.include_router(ui.router)``) and every response carries the security headers:
the page's Content-Security-Policy only allows scripts and styles from this origin, so an
inline script or event handler could not run even if one slipped into the markup.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse

UI_DIR = Path(__file__).resolve().parents[2] / "ui"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # The files change with the code, not per deploy: revalidate instead of guessing a max-age.
    "Cache-Control": "no-cache",
}

router = APIRouter(tags=["ui"], include_in_schema=False)


def not_found(name: str) -> JSONResponse:
    """The usual error envelope for a missing static file."""
    return JSONResponse(
        {"error": {"code": "not_found", "message": f"no static file '{name}'"}}, status_code=404
    )


def static_file(name: str) -> Path | None:
    """The file ``name`` inside the UI folder, or None if missing, hidden or outside it."""
    root = UI_DIR.resolve()
    candidate = (root / name).resolve()
    if not candidate.is_relative_to(root) or candidate == root:
        return None
    if any(part.startswith(".") for part in candidate.relative_to(root).parts):
        return None
    if candidate.suffix not in MEDIA_TYPES or not candidate.is_file():
        return None
    return candidate


@router.api_route("/", methods=["GET", "HEAD"], response_model=None)
async def index() -> FileResponse:
    """The single page of the reviewer UI."""
    headers = {**SECURITY_HEADERS, "Content-Security-Policy": CONTENT_SECURITY_POLICY}
    return FileResponse(UI_DIR / "index.html", media_type=MEDIA_TYPES[".html"], headers=headers)


@router.api_route("/static/{name:path}", methods=["GET", "HEAD"], response_model=None)
async def static(name: str) -> FileResponse | JSONResponse:
    """A script, stylesheet or image of the UI."""
    path = static_file(name)
    if path is None:
        return not_found(name)
    return FileResponse(path, media_type=MEDIA_TYPES[path.suffix], headers=SECURITY_HEADERS)
