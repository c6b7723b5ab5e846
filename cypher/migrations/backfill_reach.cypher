// Sets reaches_memory on up to $batch units stored before the writer kept it (the property is
// null), in any project of the store: true for a memory and for a unit a memory descends from
// within 10 operation steps (20 relationships; the writer's own marks follow any number of
// steps, and a deeper chain is not expected), false otherwise. Run at start-up, after the
// schema, until it sets nothing: a store written by this version has no such unit, and the
// label scan that finds none is the whole cost.
// $params: batch (int)
MATCH (u:Unit)
WHERE u.reaches_memory IS NULL
WITH u
LIMIT $batch
SET u.reaches_memory = coalesce(u.kind = 'memory', false)
    OR EXISTS { (u)<-[:PRODUCED_BY|CONSUMES*1..20]-(:Unit {kind: 'memory'}) }
RETURN count(u) AS changed
