// Creates operations with their ordered inputs (CONSUMES) and outputs (PRODUCES, plus the reverse
// PRODUCED_BY that ancestor walks follow). Every unit named exists: the writer created it first.
// rewrites_memory is the row's when given (the writer decided it within the batch,
// ingest/marks.py), else false until ingest/mark_rewrites sets it.
// $params: project (string),
//          rows (list of {id, name, kind, system, session_id, ts (ISO-8601 string), attributes (JSON string or null), fp,
//                         inputs: list of {unit, position}, outputs: list of {unit, position},
//                         rewrites_memory (boolean or null, optional)})
UNWIND $rows AS row
CREATE (o:Operation {
  project: $project, id: row.id, name: row.name, kind: row.kind, system: row.system,
  session_id: row.session_id, ts: datetime(row.ts), attributes: row.attributes, fp: row.fp,
  rewrites_memory: coalesce(row.rewrites_memory, false)
})
WITH o, row
CALL (o, row) {
  UNWIND row.inputs AS edge
  MATCH (u:Unit {project: $project, id: edge.unit})
  CREATE (o)-[:CONSUMES {position: edge.position}]->(u)
}
CALL (o, row) {
  UNWIND row.outputs AS edge
  MATCH (u:Unit {project: $project, id: edge.unit})
  CREATE (o)-[:PRODUCES {position: edge.position}]->(u), (u)-[:PRODUCED_BY]->(o)
}
