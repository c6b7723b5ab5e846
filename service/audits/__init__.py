"""Audits: read-only questions asked of a whole project ("which messages never reached a memory?").

One audit is one rule, found in two places only: its module here (what ``GET /audits`` shows,
the statement it runs, and the Python that finishes its rule when Cypher cannot compare texts)
and its statement, ``cypher/audits/<name>.cypher``, which only the repository runs
(``service.repository.audits``). ``catalogue`` lists them; ``words`` holds the text comparisons
the rules share (built on ``service.text``); ``parameters`` reads an audit's query parameters.
``service.services.audits`` runs one for a route.
"""
