// The stored attribution of a case, as the JSON it was returned with.
// $params: project (string), case_id (string)
MATCH (:Case {project: $project, id: $case_id})-[:ATTRIBUTED]->(a:Attribution)
RETURN a.result AS result
