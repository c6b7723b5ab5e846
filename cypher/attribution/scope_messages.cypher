// The source messages a case's evidence may be (service/attribution/scope.py): messages read by
// an operation of the case's scope, or naming the scope themselves, recorded no later than the
// answer, that are source messages by the rule of graph_schema/rules.py (no operation made them,
// and they are not read only at question time). A message's recorded time is its ts, else the
// time of the first operation reading it.
// Ordered (latest first, then id) so that a limit keeps the same messages every time. `ts` is
// the recorded time as [epoch seconds, nanosecond, offset seconds] (attribution/ancestors says why).
// Each way of naming a scope is a branch of its own that reads nothing unless the scope is named
// that way (an UNWIND of an empty list ends a branch before its MATCH): sessions seek the
// (project, session_id) index; attributes have no index that answers CONTAINS on the stored
// JSON, so that branch reads the project's operations and messages (never another project's:
// the hint), which is why a job shares one read of a scope among its cases
// (service/attribution/scope_reads.py).
// $params: project (string), systems (list of string: operations of other systems do not count;
//          empty: any), sessions (list of string: operation session ids), fragments (list of
//          string: `"key":value` as the canonical attributes JSON holds them), whole_project
//          (bool: the lineage names no scope, every message of the project counts), until
//          (datetime or null: the answer's time), limit (int)
CALL () {
  UNWIND $sessions AS session
  MATCH (o:Operation {project: $project, session_id: session})
  WHERE size($systems) = 0 OR o.system IN $systems
  MATCH (o)-[:CONSUMES]->(u:Unit {kind: 'message'})
  RETURN u
  UNION
  UNWIND CASE WHEN size($fragments) > 0 THEN [true] ELSE [] END AS named
  MATCH (o:Operation {project: $project})
  USING INDEX o:Operation(project, kind)  // else the planner starts from every Unit of the store
  WHERE o.kind IS NOT NULL
    AND any(f IN $fragments WHERE o.attributes CONTAINS f)
    AND (size($systems) = 0 OR o.system IN $systems)
  MATCH (o)-[:CONSUMES]->(u:Unit {kind: 'message'})
  RETURN u
  UNION
  UNWIND CASE WHEN size($fragments) > 0 THEN [true] ELSE [] END AS named
  MATCH (u:Unit {project: $project, kind: 'message'})
  WHERE any(f IN $fragments WHERE u.attributes CONTAINS f)
  RETURN u
  UNION
  UNWIND CASE WHEN $whole_project THEN [true] ELSE [] END AS everything
  MATCH (u:Unit {project: $project, kind: 'message'})
  WHERE size($systems) = 0
     OR EXISTS { (u)<-[:CONSUMES]-(r:Operation) WHERE r.system IN $systems }
  RETURN u
}
WITH DISTINCT u AS m
WHERE m.id IS NOT NULL
  // rule: source message (graph_schema/rules.py)
  AND NOT EXISTS { (m)-[:PRODUCED_BY]->(:Operation) }
  AND (NOT EXISTS { (m)<-[:CONSUMES]-(:Operation) }
       OR EXISTS { (m)<-[:CONSUMES]-(b:Operation)
                   WHERE NOT coalesce(b.kind, '') IN ['retrieval', 'response', 'evaluation'] })
  // end rule
WITH m AS u
CALL (u) {
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
