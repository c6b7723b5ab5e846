"""Trace batches in (``POST /traces``): a batch of operations, units and cases written to the
project's graph in one transaction (a very large one in several: ``repository.write_batch``),
idempotently (a batch sent again changes nothing).

Read in this order: ``routes`` -> ``service`` (size limits, then the write) -> ``repository``
(the only Cypher). ``models`` re-exports the wire models the SDK builds batches with
(``memtrace_client.models``), so the two sides cannot drift apart.

``routes.router`` is registered by ``service.app``; this package imports nothing itself.
"""
