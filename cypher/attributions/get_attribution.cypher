// The stored attribution of a case, as the JSON it was returned with. A case has one since
// attributions/lock_case; on a store written before that, the newest is the case's attribution.
// $params: project (string), case_id (string)
MATCH (:Case {project: $project, id: $case_id})-[:ATTRIBUTED]->(a:Attribution)
RETURN a.result AS result
ORDER BY a.created_at DESC
LIMIT 1
