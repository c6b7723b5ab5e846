"""Sessions: a conversation's turns and what happened in it (``GET /sessions``,
``GET /sessions/{id}``); the console's session pages read them.

A session is named by an operation's ``session_id`` (the SDK's ``session_id``, OTLP's
``session.id`` / ``gen_ai.conversation.id``, an execution graph's session) or by a
``conversation_id`` attribute of an operation or a unit (kept as a property, indexed:
``graph_schema/scope_names.py``); the same value names the same session either way. What names
no session belongs to none: there is no fallback per trace or batch, since a trace per request
would make every request a "session" of one turn, and nothing indexed says which batch a node
came in.

Read in this order: ``routes`` -> ``service`` -> ``repository`` (the only Cypher). ``models``
holds the answers. ``DELETE /sessions/{id}`` is ``service.deletion``'s.

``routes.router`` is registered by ``service.app``; this package imports nothing itself.
"""
