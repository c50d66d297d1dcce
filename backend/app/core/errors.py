"""The application's error hierarchy: every error a client can see is defined here.

Each subclass carries the HTTP ``status_code`` and a stable machine-readable ``code``;
one exception handler (``app.main``) renders them as ``{"error": {"code", "message"}}``.
Messages are written for clients: they never contain paths, stack traces or internal names.
"""

from __future__ import annotations


class AppError(Exception):
    """Base class of all errors the service reports deliberately."""

    status_code: int = 500
    code: str = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigurationError(AppError):
    """The service cannot start or run with the given configuration or files."""

    status_code = 500
    code = "configuration_error"


class KnowledgeBaseError(ConfigurationError):
    """The knowledge-base source is empty or malformed."""

    code = "knowledge_base_error"


class ModelIntegrityError(ConfigurationError):
    """A model or tokenizer file is missing or does not match its pinned sha256."""

    code = "model_integrity_error"


class ValidationFailed(AppError):
    """The request is well-formed JSON but not acceptable."""

    status_code = 422
    code = "validation_error"


class UnsupportedClaims(ValidationFailed):
    """A reviewer's edit makes claims its citations do not support (and did not confirm them)."""

    code = "unsupported_claims"

    def __init__(self, claims: list[str]) -> None:
        listed = "; ".join(claims)
        super().__init__(
            f"{len(claims)} edited claim(s) fail the citation check: {listed}. Fix them, or "
            "send confirm_unsupported: true to approve the edit anyway"
        )
        self.claims = claims


class Unauthorized(AppError):
    """No valid credentials were presented."""

    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    """The credentials are valid but lack the role the operation needs."""

    status_code = 403
    code = "forbidden"


class RateLimited(AppError):
    """Too many requests from one client in the current window."""

    status_code = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PayloadTooLarge(AppError):
    """The request body is larger than the configured cap."""

    status_code = 413
    code = "payload_too_large"


class NotFound(AppError):
    """The addressed resource does not exist."""

    status_code = 404
    code = "not_found"


class Conflict(AppError):
    """The resource is not in a state that allows the request."""

    status_code = 409
    code = "conflict"


class UpstreamError(AppError):
    """A dependency (vector store, reranker, LLM) failed."""

    status_code = 503
    code = "upstream_unavailable"


class NotReady(AppError):
    """The service is up but not ready to serve."""

    status_code = 503
    code = "not_ready"
