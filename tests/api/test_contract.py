"""The OpenAPI document tells the truth: auth codes, statuses, examples, Allow, CORS, /mcp."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import make_settings

from app.main import ENVELOPE_RESPONSES, create_app

SUBMITTER = "contract-submitter-key-0123456789"
ADMIN = "contract-admin-key-0123456789"
ENVELOPE_STATUSES = {str(status) for status in ENVELOPE_RESPONSES}
UI_ORIGIN = "https://ui.example.com"


def keyed_settings(tmp: Path, **overrides: object) -> Any:
    return make_settings(
        tmp,
        auth="on",
        api_keys=SecretStr(f"submitter:{SUBMITTER}:sam,admin:{ADMIN}:ada"),
        rate_limit_per_minute=0,
        **overrides,
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(keyed_settings(tmp_path_factory.mktemp("contract")))
    with TestClient(app) as client:
        yield client


@pytest.fixture(scope="module")
def spec(client: TestClient) -> dict[str, Any]:
    return client.app.openapi()  # type: ignore[attr-defined,no-any-return]


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def parameter_example(parameter: dict[str, Any]) -> Any:
    if "example" in parameter:
        return parameter["example"]
    if parameter.get("examples"):
        return next(iter(parameter["examples"].values()))["value"]
    examples = parameter.get("schema", {}).get("examples")
    return examples[0] if examples else None


def body_example(spec: dict[str, Any], operation: dict[str, Any]) -> Any:
    media = operation["requestBody"]["content"]["application/json"]
    if "example" in media:
        return media["example"]
    if media.get("examples"):
        return next(iter(media["examples"].values()))["value"]
    schema = media["schema"]
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    examples = schema.get("examples")
    return examples[0] if examples else None


def concrete_path(path: str, operation: dict[str, Any]) -> str:
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            value = parameter_example(parameter) or "x"
            path = path.replace("{" + parameter["name"] + "}", str(value))
    return path


def call(client: TestClient, spec: dict[str, Any], method: str, path: str, key: str | None) -> Any:
    operation = spec["paths"][path][method]
    headers = {"X-API-Key": key} if key else {}
    body = body_example(spec, operation) if "requestBody" in operation else None
    return client.request(method, concrete_path(path, operation), json=body, headers=headers)


def assert_documented(operation: dict[str, Any], status: int, what: str) -> None:
    documented = set(operation["responses"]) | ENVELOPE_STATUSES
    assert str(status) in documented, (what, status, sorted(operation["responses"]))


def test_401_is_answered_exactly_where_it_is_documented(
    client: TestClient, spec: dict[str, Any]
) -> None:
    seen_public = False
    for method, path, operation in operations(spec):
        answer = call(client, spec, method, path, key=None)
        what = f"{method.upper()} {path}"
        documents_401 = "401" in operation["responses"]
        assert (answer.status_code == 401) is documents_401, (what, answer.status_code)
        assert ("security" in operation) is documents_401, what
        assert_documented(operation, answer.status_code, what)
        seen_public |= not documents_401
    assert seen_public and "401" not in spec["paths"]["/health"]["get"]["responses"]


def test_403_is_answered_to_a_submitter_exactly_where_it_is_documented(
    client: TestClient, spec: dict[str, Any]
) -> None:
    for method, path, operation in operations(spec):
        answer = call(client, spec, method, path, key=SUBMITTER)
        what = f"{method.upper()} {path}"
        assert answer.status_code < 500, (what, answer.text[:300])
        assert_documented(operation, answer.status_code, what)
        # /mcp's 403 is the SDK's Origin check (auth off only), not a role refusal.
        role_refusal = operation["responses"].get("403", {}).get("content", {})
        documents_role_403 = "text/plain" not in role_refusal and bool(role_refusal)
        assert (answer.status_code == 403) is documents_role_403, (what, answer.status_code)


def test_every_parameter_and_request_body_has_a_valid_example(
    client: TestClient, spec: dict[str, Any]
) -> None:
    for method, path, operation in operations(spec):
        what = f"{method.upper()} {path}"
        query: dict[str, Any] = {}
        headers = {"X-API-Key": SUBMITTER}
        for parameter in operation.get("parameters", []):
            example = parameter_example(parameter)
            assert example is not None, (what, parameter["name"])
            if parameter["in"] == "query":
                query[parameter["name"]] = example
            elif parameter["in"] == "header":
                headers[parameter["name"]] = str(example)
        if "requestBody" in operation:
            assert body_example(spec, operation) is not None, what
        if method == "get" and query:
            # All examples together are one valid request (since < until, a cursor of that sort).
            answer = client.get(concrete_path(path, operation), params=query, headers=headers)
            assert answer.status_code not in (422, 500), (what, answer.text[:300])
            assert_documented(operation, answer.status_code, what)


def test_each_body_example_gets_a_documented_answer(
    client: TestClient, spec: dict[str, Any]
) -> None:
    posted = 0
    for method, path, operation in operations(spec):
        if "requestBody" not in operation:
            continue
        answer = call(client, spec, method, path, key=ADMIN)
        what = f"{method.upper()} {path}"
        assert answer.status_code < 500, (what, answer.text[:300])
        assert_documented(operation, answer.status_code, what)
        posted += 1
    assert posted >= 8


def template_regex(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")


def test_a_405_names_the_methods_the_path_really_serves(
    client: TestClient, spec: dict[str, Any]
) -> None:
    for path, item in spec["paths"].items():
        url = concrete_path(path, next(iter(item.values())))
        served = {
            method.upper()
            for template, other in spec["paths"].items()
            if template_regex(template).match(url)
            for method in other
        }
        refused = next(m for m in ("DELETE", "PUT", "PATCH") if m not in served)
        answer = client.request(refused, url)
        assert answer.status_code == 405, (refused, url)
        assert answer.json()["error"]["code"] == "method_not_allowed"
        assert set(answer.headers["Allow"].split(", ")) == served, (url, answer.headers)
    assert client.delete("/api/incidents").headers["Allow"] == "GET, POST"
    assert client.delete("/api/incidents/abc").headers["Allow"] == "GET"
    # Without RCA_CORS_ORIGINS, OPTIONS is one more method the path does not serve.
    options = client.options("/api/incidents", headers={"Origin": UI_ORIGIN})
    assert options.status_code == 405 and options.headers["Allow"] == "GET, POST"


def test_a_refused_cors_preflight_is_a_400_in_the_envelope(tmp_path: Path) -> None:
    app = create_app(keyed_settings(tmp_path, cors_origins=UI_ORIGIN))
    client = TestClient(app)
    preflight = {"Access-Control-Request-Method": "POST"}
    refused = client.options(
        "/api/incidents", headers={"Origin": "https://evil.example", **preflight}
    )
    assert refused.status_code == 400
    assert refused.headers["content-type"].startswith("application/json")
    body = refused.json()
    assert set(body) == {"error"} and body["error"]["code"] == "bad_request"
    assert "origin" in body["error"]["message"]
    allowed = client.options("/api/incidents", headers={"Origin": UI_ORIGIN, **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == UI_ORIGIN


def test_mcp_and_the_key_schemes_are_in_the_document(
    client: TestClient, spec: dict[str, Any]
) -> None:
    # Completed once and cached like FastAPI's own document.
    assert client.app.openapi() is spec  # type: ignore[attr-defined]
    mcp = spec["paths"]["/mcp"]
    # The route takes POST only (stateless): GET and DELETE must not be documented.
    assert set(mcp) == {"post"}
    assert mcp["post"]["responses"]["401"]["content"]["application/json"]["schema"][
        "$ref"
    ].endswith("ErrorResponse")
    assert "search_knowledge" in mcp["post"]["description"]
    schemes = spec["components"]["securitySchemes"]
    assert {s.get("name") or s.get("scheme") for s in schemes.values()} == {"X-API-Key", "bearer"}
    # Both schemes the document names are ones the service accepts.
    assert client.get("/api/me", headers={"X-API-Key": SUBMITTER}).status_code == 200
    assert (
        client.get("/api/me", headers={"Authorization": f"Bearer {SUBMITTER}"}).json()["name"]
        == "sam"
    )
