// An operation's outputs, in order, plus the reverse PRODUCED_BY that ancestor walks follow.
// $params: project (string), rows (list of {op, unit, position})
UNWIND $rows AS row
MATCH (o:Operation {project: $project, id: row.op})
MATCH (u:Unit {project: $project, id: row.unit})
MERGE (o)-[:PRODUCES {position: row.position}]->(u)
MERGE (u)-[:PRODUCED_BY]->(o)
