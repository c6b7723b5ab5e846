// Links each case to the answer unit it judged.
// $params: project (string), rows (list of {case, unit})
UNWIND $rows AS row
MATCH (c:Case {project: $project, id: row.case})
MATCH (u:Unit {project: $project, id: row.unit})
MERGE (c)-[:ANSWERED_BY]->(u)
