"""Audits: read-only questions asked of a whole project ("which messages never reached a memory?").

One audit is one rule, found in two places only: its module here (what ``GET /audits`` shows,
the statement it runs, and the Python that finishes its rule when Cypher cannot compare texts)
and its statement, ``cypher/audits/<name>.cypher``, which only ``repository`` runs.
``catalogue`` lists them; ``words`` holds the text comparisons the rules share (built on
``service.text``); ``parameters`` reads an audit's query parameters. The feature reads as the
others: ``routes`` (``GET /audits``, ``GET /audits/{name}``) -> ``service`` (runs one for a
route, within the audit time budget) -> ``repository`` (the only Cypher), with ``models`` for
the answers.

``routes.router`` is registered by ``service.app``; this package imports nothing itself, so a
reader of one module (the CLI reads ``reports.tables``) does not load the web stack.
"""
