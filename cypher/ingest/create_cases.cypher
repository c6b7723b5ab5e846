// Creates cases with their answer unit (ANSWERED_BY) and ordered evidence units (EVIDENCE). As in
// create_operations.cypher, a unit a concurrent deletion removed since the writer found it is
// returned as lost, and the writer runs the batch again.
// $params: project (string),
//          rows (list of {id, question, expected_answer, verdict, attributes (JSON string or null), fp,
//                         answer_unit (string or null), evidence: list of {unit, position}})
// Returns: lost (ids of the units named that are not stored)
UNWIND $rows AS row
CREATE (c:Case {
  project: $project, id: row.id, question: row.question, expected_answer: row.expected_answer,
  verdict: row.verdict, attributes: row.attributes, fp: row.fp
})
WITH c, row
CALL (c, row) {
  UNWIND CASE WHEN row.answer_unit IS NULL THEN [] ELSE [row.answer_unit] END AS answer_id
  OPTIONAL MATCH (u:Unit {project: $project, id: answer_id})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    CREATE (c)-[:ANSWERED_BY]->(found))
  RETURN collect(CASE WHEN u IS NULL THEN answer_id END) AS lost_answer
}
CALL (c, row) {
  UNWIND row.evidence AS edge
  OPTIONAL MATCH (u:Unit {project: $project, id: edge.unit})
  FOREACH (found IN CASE WHEN u IS NULL THEN [] ELSE [u] END |
    CREATE (c)-[:EVIDENCE {position: edge.position}]->(found))
  RETURN collect(CASE WHEN u IS NULL THEN edge.unit END) AS lost_evidence
}
UNWIND lost_answer + lost_evidence AS id
RETURN collect(DISTINCT id) AS lost
