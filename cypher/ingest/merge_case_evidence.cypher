// Links each case to the units known to carry the information it needs, in the given order.
// $params: project (string), rows (list of {case, unit, position})
UNWIND $rows AS row
MATCH (c:Case {project: $project, id: row.case})
MATCH (u:Unit {project: $project, id: row.unit})
MERGE (c)-[:EVIDENCE {position: row.position}]->(u)
