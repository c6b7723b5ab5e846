// Everything derived from some units (the units included): the operations that consumed them,
// what those produced, and so on. Follows (:Operation)-[:CONSUMES]->(:Unit) and
// (:Unit)-[:PRODUCED_BY]->(:Operation) against their direction, one single-direction pattern, so
// the planner runs a pruning breadth-first expand. Same projection as attribution/ancestors
// (`ts` as [epoch seconds, nanosecond, offset seconds]).
// $params: project (string), unit_ids (list of string), limit (int: at most this many nodes)
UNWIND $unit_ids AS unit_id
MATCH (start:Unit {project: $project, id: unit_id})
MATCH (start)<-[:PRODUCED_BY|CONSUMES*0..]-(x)
WITH DISTINCT x
LIMIT $limit
RETURN collect(x {
  .id, .kind, .name, .content, .system, .session_id, .attributes, .defined,
  ts: CASE WHEN x.ts IS NULL THEN null
      ELSE [x.ts.epochSeconds, x.ts.nanosecond, x.ts.offsetSeconds] END,
  is_operation: x:Operation,
  edges: CASE WHEN x:Operation THEN COLLECT {
    MATCH (x)-[r:CONSUMES|PRODUCES]->(u:Unit)
    RETURN [type(r), u.id, r.position]
  } ELSE [] END
}) AS nodes
