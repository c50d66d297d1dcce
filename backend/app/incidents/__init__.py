"""Incidents: the durable index, the audit trail and the service that drives the graph."""
