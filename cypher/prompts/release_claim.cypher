// Releases the claim $operation_id holds on prompt $name (finished, refused or failed), so the
// next optimisation of the prompt may start at once. The node stays, empty: deleting it would
// pull it from under a claim waiting on its lock.
// $params: project (string), name (string), operation_id (string)
MATCH (c:OptimizationClaim {project: $project, id: $name})
WHERE c.operation_id = $operation_id
REMOVE c.operation_id, c.claimed_at, c.heartbeat_at
