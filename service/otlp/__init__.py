"""OpenTelemetry as one feature: ``POST /otlp/v1/traces`` (an OTLP export converted to a trace
batch by ``ingest.otlp`` and written like ``POST /traces``), ``POST /otlp/v1/logs`` (GenAI
message events joined to their spans, ``span_logs``), ``POST /otlp/cases`` (a case recorded
later by trace id) and ``GET /otlp/warnings`` (a project's export warnings).

Read in this order: ``routes`` -> ``service`` (decode, convert, look up what the export names
from earlier exports, write) with ``span_logs``, ``trace_cases`` and ``warnings`` beside it ->
the repositories (the only Cypher): ``lineage_repository`` (stored versions and answers an
export links to), ``span_logs_repository`` (kept log events, joined to stored operations),
``trace_cases_repository``, ``warnings_repository``; ``models`` for the answers.

``routes.router`` is registered by ``service.app``; this package imports nothing itself, so a
reader of one module (the CLI reads ``reports.tables``) does not load the web stack.
"""
