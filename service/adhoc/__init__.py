"""Ad-hoc Cypher (``POST /cypher``): a read-only query confined to one project, bounded in time,
rows and bytes, for the audits a user writes in the graph.

Read in this order: ``routes`` (the endpoint) -> ``service`` (guard, run, shape the answer) ->
``repository`` (the only Cypher: the wrapped query in a read transaction). Beside them:
``guard`` (what a query may do: read-only clauses, pinned to ``$project``), ``text`` (reading a
query's text: comments, strings, names), ``parameters`` (the caller's ``params`` as Cypher
values), ``bound`` (the wrapper that makes Neo4j cut big rows before they are sent) and
``models`` (request and answer).

``routes.router`` is registered by ``service.app``; this package imports nothing itself, so a
reader of one module (the CLI reads ``reports.tables``) does not load the web stack.
"""
