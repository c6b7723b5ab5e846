"""Prompts as one feature: prompt versions recorded with the operations that used them, their
failure rates by error type, and the optimiser that proposes the next version from the
failures a version caused (``GET /prompts``, ``GET /prompts/{name}``,
``POST /prompts/{name}/optimize``).

Read in this order: ``routes`` -> ``service`` (versions and their figures) and ``optimize``
(one optimisation: the failures, the proposal, the held-out check) -> ``repository`` (the only
Cypher). Beside them: ``proposal`` (asking the model for an edit and refusing a cut, repeated
or echoed one), ``budget`` (the optimiser's hard budget of calls and tokens over the one chat
client, ``service.llm``) and ``models``.

``routes.router`` is registered by ``service.app``; this package imports nothing itself, so a
reader of one module (the CLI reads ``reports.tables``) does not load the web stack.
"""
