// Every unit and operation a unit transitively depends on (the unit itself included), each
// operation with all its CONSUMES/PRODUCES edges as [type, unit id, position]. Follows
// (:Unit)-[:PRODUCED_BY]->(:Operation) and (:Operation)-[:CONSUMES]->(:Unit), both outgoing, so
// the planner runs a pruning breadth-first expand whose cost grows with the unit's ancestry, not
// with the graph. One row holding a list: the driver decodes that far faster than one row a node.
// `ts` is [epoch seconds, nanosecond, offset seconds], not a DateTime: decoding a thousand
// DateTimes was most of the endpoint's time (service/neo4j_values.py: from_epoch).
// The long values stay in Neo4j (issue 33: 60 units of 1 MB in one ancestry made a 60 MB
// answer): `content` is cut to its first $value_chars characters and `attributes` (a JSON text)
// left out when longer; `content_chars` and `attributes_chars` are the stored lengths of the
// values cut (null for a value sent whole), so the service can say what was cut. The other
// texts are bounded at ingest (ids 256 characters).
// $params: project (string), unit_id (string), limit (int: at most this many nodes),
//   value_chars (int: the longest content or attributes text sent)
MATCH (start:Unit {project: $project, id: $unit_id})
MATCH (start)-[:PRODUCED_BY|CONSUMES*0..]->(x)
WITH DISTINCT x
LIMIT $limit
RETURN collect(x {
  .id, .kind, .name, .system, .session_id, .defined,
  content: left(x.content, $value_chars),
  content_chars: CASE WHEN size(x.content) > $value_chars THEN size(x.content) END,
  attributes: CASE WHEN size(x.attributes) <= $value_chars THEN x.attributes END,
  attributes_chars: CASE WHEN size(x.attributes) > $value_chars THEN size(x.attributes) END,
  ts: CASE WHEN x.ts IS NULL THEN null
      ELSE [x.ts.epochSeconds, x.ts.nanosecond, x.ts.offsetSeconds] END,
  is_operation: x:Operation,
  edges: CASE WHEN x:Operation THEN COLLECT {
    MATCH (x)-[r:CONSUMES|PRODUCES]->(u:Unit)
    RETURN [type(r), u.id, r.position]
  } ELSE [] END
}) AS nodes
