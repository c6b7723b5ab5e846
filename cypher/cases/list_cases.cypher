// A page of a project's cases in id order, optionally only those with one verdict or whose
// question contains some text, each with what a person needs to pick one: the question, the
// expected and the given answer, when and by which system and session it was answered, and the
// stored attribution's status and error type, if any.
// $params: project (string), verdict (string or null), text (lower-case string or null: a
//          substring of the question), system (string or null: the system of the operation
//          that produced the answer), since (UTC datetime or null: answered at or after, the
//          answering operation's time, else the answer unit's), skip (int), limit (int)
MATCH (c:Case {project: $project})
WHERE c.id IS NOT NULL  // seeks the (project, id) key index instead of scanning every project
  AND ($verdict IS NULL OR c.verdict = $verdict)
  AND ($text IS NULL OR toLower(c.question) CONTAINS $text)
  AND ($system IS NULL OR EXISTS {
    MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(o:Operation) WHERE o.system = $system
  })
  AND ($since IS NULL OR any(t IN COLLECT {
    MATCH (c)-[:ANSWERED_BY]->(a:Unit)
    OPTIONAL MATCH (a)-[:PRODUCED_BY]->(o:Operation)
    RETURN coalesce(o.ts, a.ts)
  } WHERE t >= $since))
WITH c
ORDER BY c.id
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (c)-[:ANSWERED_BY]->(answer:Unit)
OPTIONAL MATCH (answer)-[:PRODUCED_BY]->(op:Operation)
OPTIONAL MATCH (c)-[:ATTRIBUTED]->(a:Attribution)
WITH c, answer, op, a
ORDER BY a.created_at DESC
WITH c, head(collect(answer)) AS answer, head(collect(op)) AS op, head(collect(a)) AS a
RETURN c.id AS id, c.verdict AS verdict, c.question AS question,
       c.expected_answer AS expected_answer, answer.content AS answer,
       coalesce(op.ts, answer.ts) AS answered_at, op.system AS system,
       op.session_id AS session_id, a.status AS attribution_status, a.error_type AS error_type
ORDER BY id
