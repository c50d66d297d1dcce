"""Incident intake: Alertmanager webhooks, raw evidence parsing, notifications, sample scenarios."""
