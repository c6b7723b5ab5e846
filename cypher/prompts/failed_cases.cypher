// The failed cases whose stored attribution blames an operation that ran with the prompt
// version $version_id, in case id order, with what the feedback on the prompt needs: the
// attribution (its JSON result), the case, the answer given, and the blamed operation's other
// inputs (the prompt itself left out) and its outputs.
// $params: project (string), version_id (string), error_types (list of string or null),
//          system (string or null), since (datetime or null), until (datetime or null: the
//          blamed operation ran before it), limit (int)
MATCH (u:Unit {project: $project, id: $version_id})<-[:CONSUMES]-(o:Operation)
      <-[:BLAMES]-(a:Attribution {status: 'attributed'})<-[:ATTRIBUTED]-(c:Case)
WHERE ($error_types IS NULL OR a.error_type IN $error_types)
  AND ($system IS NULL OR o.system = $system)
  AND ($since IS NULL OR o.ts >= $since)
  AND ($until IS NULL OR o.ts < $until)
WITH DISTINCT a, o, c
ORDER BY c.id
LIMIT $limit
RETURN c.id AS case_id,
       a.result AS result,
       c.question AS question,
       c.expected_answer AS expected_answer,
       COLLECT { MATCH (c)-[:ANSWERED_BY]->(x:Unit) RETURN x.content }[0] AS answer,
       o.id AS operation_id,
       o.name AS operation_name,
       o.kind AS operation_kind,
       COLLECT {
         MATCH (o)-[e:CONSUMES]->(x:Unit) WHERE x.kind <> 'prompt'
         RETURN {id: x.id, kind: x.kind, content: x.content} ORDER BY e.position
       } AS inputs,
       COLLECT {
         MATCH (o)-[e:PRODUCES]->(x:Unit)
         RETURN {id: x.id, kind: x.kind, content: x.content} ORDER BY e.position
       } AS outputs
