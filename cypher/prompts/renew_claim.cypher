// A running optimisation says it is alive: renews its claim on prompt $name and answers
// whether it still holds it (false: its claim went stale and another optimisation took it).
// The first SET takes the claim's write lock before the holder is read, as
// prompts/claim_optimization does, so a takeover committing at the same moment is seen.
// $params: project (string), name (string), operation_id (string)
MATCH (c:OptimizationClaim {project: $project, id: $name})
SET c.claim_lock = true
REMOVE c.claim_lock
WITH c, c.operation_id = $operation_id AS owned
CALL (c, owned) {
  WITH c WHERE owned
  SET c.heartbeat_at = datetime()
}
RETURN owned
