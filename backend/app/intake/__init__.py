"""Incident intake: Alertmanager webhooks, log files, notifications, sample scenarios."""
