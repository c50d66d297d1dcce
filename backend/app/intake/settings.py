"""The intake's own view of configuration, mapped from ``Settings`` by the runtime.

The intake never reads the environment: the runtime builds an ``IntakeSettings`` from the one
``Settings`` object (``RCA_NOTIFY_WEBHOOK_URL`` and friends) and hands it over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.evidence.patterns import DEFAULT_ERROR_CODE_PATTERNS


@dataclass(frozen=True)
class IntakeSettings:
    """Everything the intake needs to know.

    Attributes:
        notify_webhook_url: Slack-compatible incoming-webhook URL; ``None`` disables notifying.
        notify_timeout_seconds: Timeout of one notification attempt (connect and read).
        notify_retries: Extra attempts after a failed one (so ``2`` means at most 3 attempts).
        notify_reminder_after_minutes: Remind once when a review has waited this long.
        ui_base_url: Where reviewers open the UI; links are ``{ui_base_url}/#/incidents/{id}``.
        error_code_patterns: Regular expressions an error code must match.
        parse_evidence: Add parsed evidence (exception, codes, statuses) to the retrieval query.
    """

    notify_webhook_url: str | None = None
    notify_timeout_seconds: float = 5.0
    notify_retries: int = 2
    notify_reminder_after_minutes: float = 60.0
    ui_base_url: str = "http://127.0.0.1:8000"
    error_code_patterns: tuple[str, ...] = field(default=DEFAULT_ERROR_CODE_PATTERNS)
    parse_evidence: bool = True
