// After a deletion, sets reaches_memory again on the units whose way to a memory may have gone
// through a deleted operation: the units it read that are still stored, and their ancestors up to
// the nearest memory (a memory's ancestors still reach it). Each is set from the graph as it now
// is: true for a memory and for a unit a memory descends from within 10 operation steps
// (20 relationships), false otherwise.
// $params: project (string),
//          ids (list of string: units the deleted operations consumed; those deleted with them
//               are not found)
UNWIND $ids AS id
MATCH (u:Unit {project: $project, id: id})
WHERE u.reaches_memory AND (u.kind IS NULL OR u.kind <> 'memory')
MATCH (u)((:Unit)-[:PRODUCED_BY]->(:Operation)-[:CONSUMES]->(x:Unit)
          WHERE x.kind IS NULL OR x.kind <> 'memory'){0,10}(a:Unit)
WITH DISTINCT a
WHERE a.reaches_memory
SET a.reaches_memory = EXISTS { (a)<-[:PRODUCED_BY|CONSUMES*1..20]-(:Unit {kind: 'memory'}) }
RETURN count(a) AS rechecked
