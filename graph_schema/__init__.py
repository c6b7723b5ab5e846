"""The memory evolution graph: what MemTrace stores, as the writer, the Cypher catalogue and the
API share it (the wire format that fills it is ``memtrace_client.models``; the API's models are
the ``models`` module of each feature package under ``service/``).

Nodes (every node carries ``project``; ``(project, id)`` is unique per label):

    (:Operation {project, id, name, kind, system, session_id, ts, attributes, fp,
                 conversation_id, user_id, store_id})
    (:Unit      {project, id, kind, content, ts, attributes, fp, defined,
                 conversation_id, user_id, store_id})

``conversation_id``, ``user_id`` and ``store_id`` repeat the attributes of those names
(``scope_names``).
    (:Case      {project, id, question, expected_answer, verdict, attributes, fp})

Relationships:

    (:Operation)-[:CONSUMES {position}]->(:Unit)     an input, in argument order
    (:Operation)-[:PRODUCES {position}]->(:Unit)     an output, in result order
    (:Unit)-[:PRODUCED_BY]->(:Operation)             the reverse of PRODUCES, kept by the writer
    (:Case)-[:ANSWERED_BY]->(:Unit)                  the answer the case judged
    (:Case)-[:EVIDENCE {position}]->(:Unit)          units known to carry the needed information
    (:Operation)-[:USED]->(:Attribution)             failures an optimization used (prompts.py)

``PRODUCED_BY`` exists only so that "every ancestor of a unit" is one single-direction
variable-length pattern, ``(u)-[:PRODUCED_BY|CONSUMES*0..]->(x)``, which Neo4j runs as a
pruning breadth-first expand. The equivalent mixed-direction quantified path pattern enumerates
every path and explodes on the diamond-shaped DAGs memory systems produce (see README).

``labels`` names every label, relationship type (attributions and jobs too), constraint and
index; ``kinds`` the kinds of units and operations, the verdicts and the memory-entry rule.
"""

from graph_schema.kinds import ENTRY_KEYS, OperationKind, UnitKind, Verdict, memory_entry
from graph_schema.scope_names import SCOPE_KEYS, STORE_KEY, scope_names, scope_value

__all__ = [
    "ENTRY_KEYS",
    "SCOPE_KEYS",
    "STORE_KEY",
    "OperationKind",
    "UnitKind",
    "Verdict",
    "memory_entry",
    "scope_names",
    "scope_value",
]
