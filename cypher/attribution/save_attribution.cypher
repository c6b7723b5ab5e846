// Stores an attribution (replacing the case's previous one) linked to its case and, when one was
// named, to the blamed operation.
// $params: project (string), case_id (string), operation_id (string or null),
//          props (map: status, error_type, confidence, reason, result (JSON string), created_at, judge, model)
MATCH (c:Case {project: $project, id: $case_id})
OPTIONAL MATCH (c)-[:ATTRIBUTED]->(old:Attribution)
DETACH DELETE old
WITH c
CREATE (c)-[:ATTRIBUTED]->(a:Attribution {project: $project, case_id: $case_id})
SET a += $props
WITH a
OPTIONAL MATCH (o:Operation {project: $project, id: $operation_id})
FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END | CREATE (a)-[:BLAMES]->(o))
