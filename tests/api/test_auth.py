"""API keys and roles: fail closed, 401/403, identities on decisions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from tests.helpers import unique_name

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.core.security import KeyRing, Role, is_loopback
from app.main import create_app
from app.sample_app import crash_checkout

SUBMITTER = "submitter-key-0123456789"
REVIEWER = "reviewer-key-0123456789"
ADMIN = "admin-key-0123456789abc"


def keyed_settings(tmp: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "state_dir": tmp,
        "collection_name": unique_name("kb"),
        "api_keys": SecretStr(f"submitter:{SUBMITTER},reviewer:{REVIEWER}:ana,admin:{ADMIN}:root"),
        "_env_file": None,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(keyed_settings(tmp_path_factory.mktemp("auth")))) as client:
        yield client


def test_keyring_parses_roles_names_and_rejects_bad_entries() -> None:
    ring = KeyRing.parse(f"reviewer:{REVIEWER}:ana, submitter:{SUBMITTER}")
    assert len(ring) == 2
    ana = ring.identify(REVIEWER)
    assert ana is not None and ana.name == "ana" and ana.role is Role.REVIEWER
    anonymous = ring.identify(SUBMITTER)
    assert anonymous is not None and anonymous.name == "submitter"
    assert ring.identify("wrong-key-0123456789") is None and ring.identify(None) is None
    for bad in ("reviewer", "boss:0123456789abcdefgh", "reviewer:short"):
        with pytest.raises(ConfigurationError):
            KeyRing.parse(bad)


def test_roles_nest() -> None:
    assert Role.ADMIN > Role.REVIEWER > Role.SUBMITTER


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_no_keys_fails_closed(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="RCA_API_KEYS"):
        create_app(keyed_settings(tmp_path, api_keys=None))


def test_auth_off_only_on_loopback(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="loopback"):
        create_app(keyed_settings(tmp_path, api_keys=None, auth="off", host="0.0.0.0"))
    create_app(keyed_settings(tmp_path, api_keys=None, auth="off", host="127.0.0.1"))


def test_missing_or_wrong_key_is_401_without_detail(keyed: TestClient) -> None:
    for headers in ({}, {"X-API-Key": "wrong-key-0123456789"}, {"Authorization": "Basic abc"}):
        response = keyed.get("/api/incidents", headers=headers)
        assert response.status_code == 401
        assert response.json() == {
            "error": {"code": "unauthorized", "message": "missing or invalid API key"}
        }


def test_health_is_public_and_ready_needs_a_key(keyed: TestClient) -> None:
    assert keyed.get("/health").status_code == 200
    assert keyed.get("/ready").status_code == 401
    assert keyed.get("/ready", headers={"X-API-Key": SUBMITTER}).status_code == 200


def test_submitter_creates_but_may_not_decide(keyed: TestClient) -> None:
    created = keyed.post("/api/incidents", json=crash_checkout(), headers={"X-API-Key": SUBMITTER})
    assert created.status_code == 201
    url = f"/api/incidents/{created.json()['id']}/decision"
    denied = keyed.post(url, json={"action": "approve"}, headers={"X-API-Key": SUBMITTER})
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "forbidden"
    assert (
        keyed.get(
            url.removesuffix("/decision"), headers={"Authorization": f"Bearer {SUBMITTER}"}
        ).json()["status"]
        == "awaiting_review"
    )


def test_decision_records_the_key_identity_not_the_body(keyed: TestClient) -> None:
    created = keyed.post(
        "/api/incidents", json=crash_checkout(), headers={"X-API-Key": SUBMITTER}
    ).json()
    decided = keyed.post(
        f"/api/incidents/{created['id']}/decision",
        json={"action": "approve", "reviewer": "mallory"},
        headers={"Authorization": f"Bearer {REVIEWER}"},
    )
    assert decided.status_code == 200
    assert decided.json()["decision"]["reviewer"] == "ana"


def test_admin_may_decide_too(keyed: TestClient) -> None:
    created = keyed.post(
        "/api/incidents", json=crash_checkout(), headers={"X-API-Key": ADMIN}
    ).json()
    decided = keyed.post(
        f"/api/incidents/{created['id']}/decision",
        json={"action": "reject", "comment": "duplicate"},
        headers={"X-API-Key": ADMIN},
    )
    assert decided.status_code == 200 and decided.json()["decision"]["reviewer"] == "root"
