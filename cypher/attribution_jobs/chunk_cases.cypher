// A chunk's pending cases (its cases whose COVERS has no state yet), in id order, and whether
// each has a stored attribution.
// $params: project (string), job_id (string), seq (int)
MATCH (k:JobChunk {project: $project, job_id: $job_id, seq: $seq})-[:TAKES]->(c:Case)
MATCH (k)-[:CHUNK_OF]->(j:AttributionJob)-[r:COVERS]->(c)
WHERE r.state IS NULL
RETURN c.id AS case_id, EXISTS { (c)-[:ATTRIBUTED]->(:Attribution) } AS attributed
ORDER BY c.id
