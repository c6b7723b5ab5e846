// Run first in the transaction that stores an optimised version, before anything is written:
// who holds the claim on prompt $name now (read under the claim's write lock, so a takeover
// committing at the same moment is seen) and which optimization operations already produced a
// version from $parent_id, the version being optimised. The store writes only when the holder
// is $operation_id and there is none: a version is optimised into one next version, so two
// optimisations can never both write "<name>@n", even one whose claim went stale meanwhile.
// $params: project (string), name (string), parent_id (string: the old version's unit id)
OPTIONAL MATCH (c:OptimizationClaim {project: $project, id: $name})
CALL (c) {
  WITH c WHERE c IS NOT NULL
  SET c.claim_lock = true
  REMOVE c.claim_lock
}
RETURN c.operation_id AS holder,
       COLLECT {
         MATCH (:Unit {project: $project, id: $parent_id})<-[:CONSUMES]-(o:Operation)
         WHERE o.kind = 'optimization'
         RETURN o.id
       } AS children
