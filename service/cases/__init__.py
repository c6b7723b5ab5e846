"""Cases: listing and reading the stored cases, the ancestor subgraph of a case's answer
(``/cases``, ``/cases/{id}``, ``/cases/{id}/subgraph``) and the verdict given to a case later
(``POST /cases/{id}/verdict``).

Read in this order: ``routes`` -> ``service`` -> ``repository`` (the only Cypher). ``models``
holds the answers, and the verdict's request model (a wire model the SDK sends too).

``routes.router`` is registered by ``service.app``; this package imports nothing itself.
"""
