// Creates cases with their answer unit (ANSWERED_BY) and ordered evidence units (EVIDENCE).
// $params: project (string),
//          rows (list of {id, question, expected_answer, verdict, attributes (JSON string or null), fp,
//                         answer_unit (string or null), evidence: list of {unit, position}})
UNWIND $rows AS row
CREATE (c:Case {
  project: $project, id: row.id, question: row.question, expected_answer: row.expected_answer,
  verdict: row.verdict, attributes: row.attributes, fp: row.fp
})
WITH c, row
CALL (c, row) {
  UNWIND CASE WHEN row.answer_unit IS NULL THEN [] ELSE [row.answer_unit] END AS answer_id
  MATCH (u:Unit {project: $project, id: answer_id})
  CREATE (c)-[:ANSWERED_BY]->(u)
}
CALL (c, row) {
  UNWIND row.evidence AS edge
  MATCH (u:Unit {project: $project, id: edge.unit})
  CREATE (c)-[:EVIDENCE {position: edge.position}]->(u)
}
