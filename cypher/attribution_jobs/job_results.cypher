// The stored attributions of a job's cases, in case id order (the newest of a case on a store
// written before attributions/lock_cases).
// $params: project (string), job_id (string), skip (int), limit (int)
MATCH (j:AttributionJob {project: $project, id: $job_id})-[:COVERS]->(c:Case)
WHERE EXISTS { (c)-[:ATTRIBUTED]->(:Attribution) }
WITH c ORDER BY c.id SKIP $skip LIMIT $limit
RETURN head(COLLECT {
  MATCH (c)-[:ATTRIBUTED]->(a:Attribution) RETURN a.result ORDER BY a.created_at DESC
}) AS result
