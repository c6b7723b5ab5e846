// Claims the optimisation of prompt $name for the optimisation $operation_id, as one
// compare-and-set, so that one optimisation per prompt runs at a time across every service
// process on the store. The MERGE meets a concurrent one on the optimization_claim_key
// constraint (one node per prompt); the first SET takes the claim's write lock before its
// holder is read, so of two claims at once the second waits, then reads the first one's holder
// and claims nothing (a read before the lock would see the same free claim in both). The claim
// is free when nobody holds it (new, or released), or when its holder has not renewed it for
// $stale_s seconds by the store's clock (its process died: prompts/renew_claim is its
// heartbeat). Returns whether it was claimed and the holder after it (the optimisation's id,
// when it claimed the prompt).
// $params: project (string), name (string: the prompt's name), operation_id (string: the
//          optimization operation the claimant will write), stale_s (float)
MERGE (c:OptimizationClaim {project: $project, id: $name})
SET c.claim_lock = true
REMOVE c.claim_lock
WITH c,
     c.operation_id IS NULL
     OR c.operation_id = $operation_id
     OR duration.inSeconds(c.heartbeat_at, datetime()).milliseconds > $stale_s * 1000 AS claimed
CALL (c, claimed) {
  WITH c WHERE claimed
  SET c.operation_id = $operation_id, c.claimed_at = datetime(), c.heartbeat_at = datetime()
}
RETURN claimed, c.operation_id AS holder, c.claimed_at AS claimed_at
