// The source messages a case's evidence may be (service/attribution/scope.py): messages read by
// an operation of the case's scope, or naming the scope themselves, recorded no later than the
// answer. A message's recorded time is its ts, else the time of the first operation reading it.
// Ordered (latest first, then id) so that a limit keeps the same messages every time. `ts` is
// the recorded time as [epoch seconds, nanosecond, offset seconds] (attribution/ancestors says why).
// $params: project (string), systems (list of string: operations of other systems do not count;
//          empty: any), sessions (list of string: operation session ids), fragments (list of
//          string: `"key":value` as the canonical attributes JSON holds them), whole_project
//          (bool: the lineage names no scope, every message of the project counts), until
//          (datetime or null: the answer's time), limit (int)
CALL {
  MATCH (o:Operation {project: $project})
  WHERE (o.session_id IN $sessions OR any(f IN $fragments WHERE o.attributes CONTAINS f))
    AND (size($systems) = 0 OR o.system IN $systems)
  MATCH (o)-[:CONSUMES]->(u:Unit {kind: 'message'})
  RETURN u
  UNION
  MATCH (u:Unit {project: $project, kind: 'message'})
  WHERE size($fragments) > 0 AND any(f IN $fragments WHERE u.attributes CONTAINS f)
  RETURN u
  UNION
  MATCH (u:Unit {project: $project, kind: 'message'})
  WHERE $whole_project
    AND (size($systems) = 0
         OR EXISTS { (u)<-[:CONSUMES]-(r:Operation) WHERE r.system IN $systems })
  RETURN u
}
WITH DISTINCT u
CALL {
  WITH u
  OPTIONAL MATCH (u)<-[:CONSUMES]-(reader:Operation)
  RETURN min(reader.ts) AS first_read
}
WITH u, coalesce(u.ts, first_read) AS recorded
WHERE $until IS NULL OR recorded IS NULL OR recorded <= $until
WITH u, recorded
ORDER BY recorded DESC, u.id
LIMIT $limit
RETURN collect(u {
  .id, .kind, .name, .content, .attributes, .defined,
  ts: CASE WHEN recorded IS NULL THEN null
      ELSE [recorded.epochSeconds, recorded.nanosecond, recorded.offsetSeconds] END,
  is_operation: false, edges: []
}) AS nodes
