// The next pending cases of a job after a case id, in id order, and whether each has a stored
// attribution.
// $params: project (string), job_id (string), after (string: "" for the first), size (int)
MATCH (j:AttributionJob {project: $project, id: $job_id})-[r:COVERS]->(c:Case)
WHERE r.state IS NULL AND c.id > $after
RETURN c.id AS case_id, EXISTS { (c)-[:ATTRIBUTED]->(:Attribution) } AS attributed
ORDER BY c.id
LIMIT $size
