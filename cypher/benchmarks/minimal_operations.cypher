// The minimal graph: operations with what a trace sends for them, and their ordered inputs
// (CONSUMES) and outputs (PRODUCES) only: no reverse PRODUCED_BY edge, no marks.
// $params: project (string),
//          rows (list of {id, name, kind, system, session_id, ts (ISO-8601 string),
//                         inputs: list of {unit, position}, outputs: list of {unit, position}})
UNWIND $rows AS row
CREATE (o:MinimalOperation {
  project: $project, id: row.id, name: row.name, kind: row.kind, system: row.system,
  session_id: row.session_id, ts: datetime(row.ts)
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
}
