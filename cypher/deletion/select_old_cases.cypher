// The ids of a project's cases that retention removes because they are older than $before
// themselves, though no deleted operation answered them (a case sent with its answer and
// evidence units, no operation). A case is as old as the newest thing it judged: the latest
// ts of its answer unit, its evidence units and the operations that produced its answer.
// A case none of those dates has no age and is kept. Run after the old operations are gone
// (a case one of them answered went with it).
// $params: project (string), before (datetime)
MATCH (c:Case {project: $project})
WHERE c.id IS NOT NULL
WITH c,
     COLLECT { MATCH (c)-[:ANSWERED_BY|EVIDENCE]->(u:Unit) WHERE u.ts IS NOT NULL RETURN u.ts }
     + COLLECT { MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(o:Operation) RETURN o.ts }
     AS times
WHERE size(times) > 0 AND all(t IN times WHERE t < $before)
RETURN c.id AS id
