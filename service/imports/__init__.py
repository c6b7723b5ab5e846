"""Graph files in (``POST /import/execution-graph``): a file in the paper's execution-graph
format, converted by ``ingest`` into trace batches and written through ``service.traces``.

Read in this order: ``routes`` -> ``service`` (parse, convert, write). ``models`` is the answer.

``routes.router`` is registered by ``service.app``; this package imports nothing itself.
"""
