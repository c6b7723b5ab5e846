"""Nodes: one unit or one operation of a project's graph with its direct neighbours
(``GET /units/{id}``, ``GET /operations/{id}``), for the console's links from audit rows and for
anyone who holds an id and wants to see what it is.

Read in this order: ``routes`` -> ``service`` -> ``repository`` (the only Cypher); ``models``
are the answers. ``routes.router`` is registered by ``service.app``; this package imports nothing.
"""
