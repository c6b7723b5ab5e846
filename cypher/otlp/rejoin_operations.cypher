// Sets stored operations as their spans convert with the GenAI log events joined to them
// (ingest/otlp_joined.py: the messages an LLM call read, its answers, its events), in place:
// the one change an operation ever gets, and only where it adds inputs or outputs. Every edge
// it had is kept (MERGE; positions as the new definition has them), `idle` is set again, and
// the fingerprint becomes the one a re-sent export converted with those events gets, so a
// re-send is identical. An operation whose fingerprint is no longer `old_fp` is left alone.
// Every unit named exists (the writer stored them first in this transaction); one a concurrent
// deletion removed since is returned as lost.
// $params: project (string),
//          rows (list of {id, old_fp, fp, attributes (JSON string),
//                         inputs: list of {unit, position}, outputs: list of {unit, position}})
// Returns: lost (ids of the units named that are not stored)
UNWIND $rows AS row
MATCH (o:Operation {project: $project, id: row.id})
WHERE o.fp = row.old_fp
SET o.fp = row.fp, o.attributes = row.attributes,
    o.idle = CASE WHEN size(row.inputs) = 0 OR size(row.outputs) = 0 THEN true END
WITH o, row
CALL (o, row) {
  UNWIND row.inputs AS edge
  OPTIONAL MATCH (u:Unit {project: $project, id: edge.unit})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    MERGE (o)-[c:CONSUMES]->(found)
    SET c.position = edge.position)
  RETURN collect(CASE WHEN u IS NULL THEN edge.unit END) AS lost_inputs
}
CALL (o, row) {
  UNWIND row.outputs AS edge
  OPTIONAL MATCH (u:Unit {project: $project, id: edge.unit})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    MERGE (o)-[p:PRODUCES]->(found)
    SET p.position = edge.position
    MERGE (found)-[:PRODUCED_BY]->(o))
  RETURN collect(CASE WHEN u IS NULL THEN edge.unit END) AS lost_outputs
}
UNWIND lost_inputs + lost_outputs AS id
RETURN collect(DISTINCT id) AS lost
