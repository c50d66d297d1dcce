"""API-key authentication with nested roles: admin ⊇ reviewer ⊇ submitter.

Keys come from ``RCA_API_KEYS`` as comma-separated ``role:key`` or ``role:key:name`` entries; the
name (default: the role) is the identity recorded on decisions. Only sha256 digests of the keys
are held in memory, and a presented key is compared against every digest with
``hmac.compare_digest`` so the time taken does not depend on where a match is.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from enum import IntEnum

from app.core.errors import ConfigurationError


class Role(IntEnum):
    """Roles in increasing power; a higher role may do everything a lower one may."""

    SUBMITTER = 1
    REVIEWER = 2
    ADMIN = 3

    @classmethod
    def parse(cls, name: str) -> Role:
        """A role from its lower-case name."""
        try:
            return cls[name.strip().upper()]
        except KeyError as exc:
            raise ConfigurationError(
                f"RCA_API_KEYS: unknown role '{name}' (use submitter, reviewer or admin)"
            ) from exc


@dataclass(frozen=True)
class Identity:
    """Who made a request."""

    name: str
    role: Role

    def can(self, role: Role) -> bool:
        """Whether this identity holds ``role`` (roles nest)."""
        return self.role >= role


#: The identity used when authentication is switched off (loopback only).
LOCAL_IDENTITY = Identity(name="local", role=Role.ADMIN)
MIN_KEY_LENGTH = 16


def digest(key: str) -> bytes:
    """The sha256 digest a key is kept as."""
    return hashlib.sha256(key.encode("utf-8")).digest()


class KeyRing:
    """The configured keys, held as digests."""

    def __init__(self, entries: list[tuple[bytes, Identity]]) -> None:
        self._entries = entries

    @classmethod
    def parse(cls, spec: str) -> KeyRing:
        """Parse ``role:key[:name]`` entries separated by commas."""
        entries: list[tuple[bytes, Identity]] = []
        for number, raw in enumerate(spec.split(","), start=1):
            item = raw.strip()
            if not item:
                continue
            parts = item.split(":")
            if len(parts) not in (2, 3) or not parts[1]:
                raise ConfigurationError(
                    f"RCA_API_KEYS entry {number} is not 'role:key' or 'role:key:name'"
                )
            role = Role.parse(parts[0])
            if len(parts[1]) < MIN_KEY_LENGTH:
                raise ConfigurationError(
                    f"RCA_API_KEYS entry {number}: a key needs {MIN_KEY_LENGTH}+ characters"
                )
            given = parts[2].strip() if len(parts) == 3 else ""
            name = given or role.name.lower()
            entries.append((digest(parts[1]), Identity(name=name, role=role)))
        return cls(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def identify(self, key: str | None) -> Identity | None:
        """The identity holding ``key``, or None; constant time in the position of a match."""
        if not key:
            return None
        presented = digest(key)
        found: Identity | None = None
        for stored, identity in self._entries:
            if hmac.compare_digest(stored, presented):
                found = identity
        return found


def is_loopback(host: str) -> bool:
    """Whether a bind address only accepts local connections."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def generate_key() -> str:
    """A new random API key."""
    return secrets.token_urlsafe(24)
