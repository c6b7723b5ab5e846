// Every unit and operation a unit transitively depends on (the unit itself included), each
// operation with all its CONSUMES/PRODUCES edges as [type, unit id, position]: what an attribution
// walks. The same traversal and projection as cases/ancestors (the subgraph endpoint's): `ts` as
// [epoch seconds, nanosecond, offset seconds] instead of a DateTime, which the driver decodes
// several times slower (service/attribution/rows.py: timestamp).
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
