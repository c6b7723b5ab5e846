"""Deletion: a session's data, the data before a time, or a whole project, removed in bounded
batches (``DELETE /sessions/{id}``, ``/data``, ``/project``), resumable and idempotent.

Read in this order: ``routes`` -> ``service`` -> ``repository`` (the only Cypher); ``models`` are
the answers. ``routes.router`` is registered by ``service.app``; this package imports nothing.
"""
