"""The memory evolution graph: what MemTrace stores and the wire format that fills it.

Nodes (every node carries ``project``; ``(project, id)`` is unique per label):

    (:Operation {project, id, name, kind, system, session_id, ts, attributes, fp})
    (:Unit      {project, id, kind, content, ts, attributes, fp, defined})
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
"""

from graph_schema.models import (
    CaseIn,
    OperationIn,
    OperationKind,
    TraceBatch,
    UnitIn,
    UnitKind,
    Verdict,
)

__all__ = [
    "CaseIn",
    "OperationIn",
    "OperationKind",
    "TraceBatch",
    "UnitIn",
    "UnitKind",
    "Verdict",
]
