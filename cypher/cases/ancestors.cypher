// Every unit and operation a unit transitively depends on (the unit itself included), each
// operation with all its CONSUMES/PRODUCES edges. Follows (:Unit)-[:PRODUCED_BY]->(:Operation)
// and (:Operation)-[:CONSUMES]->(:Unit), both outgoing, so the planner runs a pruning
// breadth-first expand whose cost grows with the answer's ancestry, not with the graph.
// $params: project (string), unit_id (string), limit (int: at most this many nodes)
MATCH (start:Unit {project: $project, id: $unit_id})
MATCH (start)-[:PRODUCED_BY|CONSUMES*0..]->(x)
WITH DISTINCT x
LIMIT $limit
RETURN x AS node,
       CASE WHEN x:Operation THEN COLLECT {
         MATCH (x)-[r:CONSUMES|PRODUCES]->(u:Unit)
         RETURN {type: type(r), unit: u.id, position: r.position}
       } ELSE [] END AS edges
