// One case with the id of its answer unit and its evidence unit ids in order.
// $params: project (string), case_id (string)
MATCH (c:Case {project: $project, id: $case_id})
RETURN c AS case,
       COLLECT { MATCH (c)-[:ANSWERED_BY]->(a:Unit) RETURN a.id } AS answer_units,
       COLLECT {
         MATCH (c)-[e:EVIDENCE]->(u:Unit)
         RETURN u.id ORDER BY e.position
       } AS evidence_units
