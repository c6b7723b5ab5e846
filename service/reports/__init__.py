"""Reports: a project's failures by error type, system and prompt version over time, as JSON
(``GET /report``) and as one HTML file (``GET /report.html``, ``memtrace report``).

Read in this order: ``routes`` -> ``service`` (the figures from the rows) -> ``repository`` (the
only Cypher). Beside them: ``models`` (the answer), ``tables`` (the figures as text tables,
shared with the CLI), ``plots`` (inline SVG charts) and ``html`` (the page).

``routes.router`` is registered by ``service.app``; this package imports nothing itself, so a
reader of one module (the CLI reads ``reports.tables``) does not load the web stack.
"""
