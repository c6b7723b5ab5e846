"""The one home of the API's request and response models, one module per domain.

``GET /x`` answers a model from ``service.models.<domain>``; nothing else in the server defines
one. The request wire models the SDK builds its batches with (``TraceBatch`` and its parts) are
defined once in ``memtrace_client.models`` and re-exported by ``service.models.traces``, so the
server imports every model from here and the two sides cannot drift apart.

The graph itself (labels, edge types, unit and operation kinds) is ``graph_schema``'s.
"""
