"""Incident evidence: find the causal error in stack traces, log records, codes and statuses.

Pure functions, no I/O, and nothing above ``app.core``: the intake, the retrieval query builder
(``app.rag.query``), the graph and the evaluation read incidents through this package.

Modules, bottom up:

* ``patterns`` -- error codes, HTTP statuses, timestamps, levels and normalisation.
* ``model`` -- what parsing returns: ``ParsedEvidence``, ``Frame``, ``Trace`` and their enums.
* ``python_trace`` and ``java_trace`` -- the root cause of a Python or JVM stack trace.
* ``logs`` -- log records: levels, JSON fields, services, traces printed under a line.
* ``parse`` -- the entry points: ``parse_text``, ``parse_entries``, ``parse_stack_trace`` and
  ``parse_incident``.
* ``sources`` -- collectors of live evidence (Prometheus, log files) and their items; the only
  part that does I/O.
"""
