// What a session list shows of each of some sessions (sessions/list_sessions says what names
// one): its operations (those naming it as session_id or conversation_id), its turns (the
// message units those operations consume, and the message units naming it as conversation_id),
// the cases it asked (those whose answer one of its operations produced, or whose answer unit
// names it), how many of them failed, and its first and last time (of its operations and
// turns). Every read is an index seek on the session's id, then the edges of its own nodes.
// A session nothing names any longer is left out. The hints keep each branch on its index
// seek (without them the planner was seen to scan the (project, kind) index and filter it).
// Each count stops past $cap: every branch reads at most $cap + 1 nodes, so a session stamped
// on a million operations costs what one of $cap does. The turns and cases seek the session's
// operations again rather than unwind `ops`: a UNION keys its distinct rows on what the
// subquery imports, and a list of N operations imported into each of N rows held N^2 in memory
// (a session of 4,000 operations went past Neo4j's 512 MB per transaction). `capped` says a count stopped there;
// then the counts are at least what they say, and the times (of the nodes read, not the
// session's) are null. `first_at` / `last_at` are [epoch seconds, nanosecond, offset seconds]
// (service/neo4j_values.py: from_epoch).
// $params: project (string), ids (list of string: session ids), cap (int: the most a count says)
UNWIND $ids AS id
WITH id, COLLECT {
    MATCH (o:Operation {project: $project, session_id: id})
    USING INDEX SEEK o:Operation(project, session_id)
    RETURN o
    LIMIT $cap + 1
    UNION
    MATCH (o:Operation {project: $project, conversation_id: id})
    USING INDEX SEEK o:Operation(project, conversation_id)
    RETURN o
    LIMIT $cap + 1
  } AS ops
WITH id, ops, COLLECT {
    MATCH (o:Operation {project: $project, session_id: id})
    USING INDEX SEEK o:Operation(project, session_id)
    WITH o
    LIMIT $cap + 1
    MATCH (o)-[:CONSUMES]->(m:Unit)
    WHERE m.kind = 'message'
    RETURN m
    LIMIT $cap + 1
    UNION
    MATCH (o:Operation {project: $project, conversation_id: id})
    USING INDEX SEEK o:Operation(project, conversation_id)
    WITH o
    LIMIT $cap + 1
    MATCH (o)-[:CONSUMES]->(m:Unit)
    WHERE m.kind = 'message'
    RETURN m
    LIMIT $cap + 1
    UNION
    MATCH (m:Unit {project: $project, conversation_id: id})
    USING INDEX SEEK m:Unit(project, conversation_id)
    WHERE m.kind = 'message'
    RETURN m
    LIMIT $cap + 1
  } AS turns
WITH id, ops, turns, COLLECT {
    MATCH (o:Operation {project: $project, session_id: id})
    USING INDEX SEEK o:Operation(project, session_id)
    WITH o
    LIMIT $cap + 1
    MATCH (o)<-[:PRODUCED_BY]-(:Unit)<-[:ANSWERED_BY]-(c:Case)
    RETURN c
    LIMIT $cap + 1
    UNION
    MATCH (o:Operation {project: $project, conversation_id: id})
    USING INDEX SEEK o:Operation(project, conversation_id)
    WITH o
    LIMIT $cap + 1
    MATCH (o)<-[:PRODUCED_BY]-(:Unit)<-[:ANSWERED_BY]-(c:Case)
    RETURN c
    LIMIT $cap + 1
    UNION
    MATCH (a:Unit {project: $project, conversation_id: id})<-[:ANSWERED_BY]-(c:Case)
    USING INDEX SEEK a:Unit(project, conversation_id)
    RETURN c
    LIMIT $cap + 1
  } AS cases
WHERE size(ops) > 0 OR size(turns) > 0
WITH id, ops, turns, cases, size(ops) > $cap OR size(turns) > $cap OR size(cases) > $cap AS capped
WITH id, ops, turns, cases, capped, CASE WHEN capped THEN [null, null] ELSE COLLECT {
    UNWIND ops + turns AS n
    WITH n.ts AS t
    WHERE t IS NOT NULL
    RETURN [min(t), max(t)]
  }[0] END AS span
RETURN id,
       CASE WHEN size(ops) > $cap THEN $cap ELSE size(ops) END AS operations,
       CASE WHEN size(turns) > $cap THEN $cap ELSE size(turns) END AS turns,
       CASE WHEN size(cases) > $cap THEN $cap ELSE size(cases) END AS cases,
       size([c IN cases[..$cap] WHERE c.verdict = 'failed']) AS failed_cases,
       capped,
       CASE WHEN span[0] IS NULL THEN null
         ELSE [span[0].epochSeconds, span[0].nanosecond, span[0].offsetSeconds] END AS first_at,
       CASE WHEN span[1] IS NULL THEN null
         ELSE [span[1].epochSeconds, span[1].nanosecond, span[1].offsetSeconds] END AS last_at
ORDER BY id
