// Creates operations with their ordered inputs (CONSUMES) and outputs (PRODUCES, plus the reverse
// PRODUCED_BY that ancestor walks follow). Every unit named exists, the writer created or found it
// first, unless a concurrent deletion removed one since (reads take no lock): those are returned
// as lost and the writer runs the batch again (an edge is never dropped silently). Once an edge
// is created, no deletion can remove its unit before this transaction ends.
// rewrites_memory is the row's when given (the writer decided it within the batch,
// ingest/marks.py), else false until ingest/mark_rewrites sets it. idle is true on an operation
// with no inputs or no outputs and absent on every other (audit idle_operations seeks it, and
// an index holds only the few operations that have it); it never changes: an operation's edges
// are all created here, and a deletion removes a unit only once no operation refers to it.
// $params: project (string),
//          rows (list of {id, name, kind, system, session_id, ts (ISO-8601 string), attributes (JSON string or null), fp,
//                         conversation_id, user_id, store_id (string or null: graph_schema/scope_names.py),
//                         inputs: list of {unit, position}, outputs: list of {unit, position},
//                         rewrites_memory (boolean or null, optional)})
// Returns: lost (ids of the units named that are not stored)
UNWIND $rows AS row
CREATE (o:Operation {
  project: $project, id: row.id, name: row.name, kind: row.kind, system: row.system,
  session_id: row.session_id, ts: datetime(row.ts), attributes: row.attributes, fp: row.fp,
  conversation_id: row.conversation_id, user_id: row.user_id, store_id: row.store_id,
  rewrites_memory: coalesce(row.rewrites_memory, false),
  idle: CASE WHEN size(row.inputs) = 0 OR size(row.outputs) = 0 THEN true END
})
WITH o, row
CALL (o, row) {
  UNWIND row.inputs AS edge
  OPTIONAL MATCH (u:Unit {project: $project, id: edge.unit})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    CREATE (o)-[:CONSUMES {position: edge.position}]->(found))
  RETURN collect(CASE WHEN u IS NULL THEN edge.unit END) AS lost_inputs
}
CALL (o, row) {
  UNWIND row.outputs AS edge
  OPTIONAL MATCH (u:Unit {project: $project, id: edge.unit})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    CREATE (o)-[:PRODUCES {position: edge.position}]->(found), (found)-[:PRODUCED_BY]->(o))
  RETURN collect(CASE WHEN u IS NULL THEN edge.unit END) AS lost_outputs
}
UNWIND lost_inputs + lost_outputs AS id
RETURN collect(DISTINCT id) AS lost
