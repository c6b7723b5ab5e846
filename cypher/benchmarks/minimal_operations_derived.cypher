// The minimal graph's operations (benchmarks/ingest/ablation.py, variants `+derived` and
// `+reverse`) with the properties the service derives (the fingerprint and the rewrites_memory
// mark) and, when $reverse, the reverse PRODUCED_BY edge of every output that ancestor walks
// follow.
// $params: project (string), reverse (boolean),
//          rows (list of {id, name, kind, system, session_id, ts (ISO-8601 string), fp,
//                         inputs: list of {unit, position}, outputs: list of {unit, position}})
UNWIND $rows AS row
CREATE (o:MinimalOperation {
  project: $project, id: row.id, name: row.name, kind: row.kind, system: row.system,
  session_id: row.session_id, ts: datetime(row.ts), fp: row.fp, rewrites_memory: false
})
WITH o, row
CALL (o, row) {
  UNWIND row.inputs AS edge
  MATCH (u:MinimalUnit {project: $project, id: edge.unit})
  CREATE (o)-[:CONSUMES {position: edge.position}]->(u)
}
CALL (o, row) {
  UNWIND row.outputs AS edge
  MATCH (u:MinimalUnit {project: $project, id: edge.unit})
  CREATE (o)-[:PRODUCES {position: edge.position}]->(u)
  FOREACH (_ IN CASE WHEN $reverse THEN [1] ELSE [] END | CREATE (u)-[:PRODUCED_BY]->(o))
}
