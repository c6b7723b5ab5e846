// An operation's inputs, in order. MERGE keeps a re-sent batch from adding a second edge.
// $params: project (string), rows (list of {op, unit, position})
UNWIND $rows AS row
MATCH (o:Operation {project: $project, id: row.op})
MATCH (u:Unit {project: $project, id: row.unit})
MERGE (o)-[:CONSUMES {position: row.position}]->(u)
