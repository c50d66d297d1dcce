"""Review notifications: a Slack-compatible webhook when an RCA awaits review or is decided.

Three small parts, wired together by the observer ``WebhookNotifier`` (``notifier``):

- ``messages``: the message of each notification (``render_message``) and its outbox key;
- ``delivery``: durable delivery through the outbox — the background sender, bounded retries
  with backoff, the dispatcher loop and pruning;
- ``reminders``: one reminder for each review that has waited too long.
"""

from app.intake.notify.messages import NotificationKind, incident_url, render_message
from app.intake.notify.notifier import WebhookNotifier, build_notifier

__all__ = [
    "NotificationKind",
    "WebhookNotifier",
    "build_notifier",
    "incident_url",
    "render_message",
]
