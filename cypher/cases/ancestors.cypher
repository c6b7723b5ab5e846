// Every unit and operation a unit transitively depends on (the unit itself included), each
// operation with all its CONSUMES/PRODUCES edges as [type, unit id, position]. Follows
// (:Unit)-[:PRODUCED_BY]->(:Operation) and (:Operation)-[:CONSUMES]->(:Unit), both outgoing, so
// the planner runs a pruning breadth-first expand whose cost grows with the unit's ancestry, not
// with the graph. One row holding a list: the driver decodes that far faster than one row a node.
// `ts` is [epoch seconds, nanosecond, offset seconds], not a DateTime: decoding a thousand
// DateTimes was most of the endpoint's time (service/neo4j_values.py: from_epoch).
// $params: project (string), unit_id (string), limit (int: at most this many nodes)
MATCH (start:Unit {project: $project, id: $unit_id})
MATCH (start)-[:PRODUCED_BY|CONSUMES*0..]->(x)
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
