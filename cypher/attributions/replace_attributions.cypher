// Stores attributions, each linked to its case and, when one was named, to the blamed
// operation, deleting every attribution the case had before (a store written before the case
// lock may hold several). Run after attributions/lock_cases on the same cases in the same
// transaction; without that lock two concurrent writers could each delete nothing and both
// create one. A result that does not fit the case's verdict as it is now (a blame of a case set
// passed, or a not_failed of a case set failed, while the walk ran) is not stored: it was made
// for a verdict the case no longer has (verdicts/record_verdict deletes such attributions too).
// $params: project (string),
//          rows (list of map: case_id (string), operation_id (string or null),
//                props (map: status, error_type, confidence, reason, result (JSON string),
//                       created_at, judge, model, llm_verdicts (int: verdicts from the LLM),
//                       job (string or null: the job that stored it),
//                       evidence (list of string: the unit ids the walk took as evidence, which
//                       the audits read for a case without evidence_units)))
UNWIND $rows AS row
MATCH (c:Case {project: $project, id: row.case_id})
WHERE (c.verdict = 'failed') = (row.props.status <> 'not_failed')
CALL (c) {
  OPTIONAL MATCH (c)-[:ATTRIBUTED]->(old:Attribution)
  DETACH DELETE old
}
CREATE (c)-[:ATTRIBUTED]->(a:Attribution {project: $project, case_id: row.case_id})
SET a += row.props
WITH a, row
OPTIONAL MATCH (o:Operation {project: $project, id: row.operation_id})
FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END | CREATE (a)-[:BLAMES]->(o))
