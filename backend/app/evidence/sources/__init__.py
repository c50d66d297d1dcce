"""Evidence sources: collect live metrics and log lines about an incident before the analysis.

Nothing above ``app.core`` is imported: the graph's ``collect`` node drives these, and the
items they return are plain data the rest of the product cites like any other evidence.

Modules, bottom up:

* ``base`` -- the ``EvidenceSource`` protocol, ``CollectionRequest`` and ``CollectedItem``.
* ``promql`` -- the shipped RED templates, template rendering, the alert's own expression.
* ``series`` -- step and rate window from the data, one-line summaries, chart points.
* ``config`` -- the sources file (YAML): query templates and log globs per service.
* ``prometheus`` -- the Prometheus source (HTTP API via httpx).
* ``logfiles`` -- the log-file source (error and warning records in the window).
* ``collector`` -- every source concurrently, with timeouts and a budget; ``build_collector``.

Formats, ids and limits: ``docs/architecture/investigation.md``.
"""
