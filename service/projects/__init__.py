"""Projects (``GET /projects``): the projects a caller may read, with their counts, over every
store that holds one.

Read in this order: ``routes`` -> ``service`` -> ``repository`` (the only Cypher); ``models`` is
the answer. ``routes.router`` is registered by ``service.app``; this package imports nothing.
"""
