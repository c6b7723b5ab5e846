// As cases/list_cases (the same filters, the same columns), newest first: by when the answer
// was given (the answering operation's time, else the answer unit's; cases without one last),
// then by id. Every matching case's time is read before the page is cut.
// $params: project (string), verdict (string or null), text (lower-case string or null: a
//          substring of the question or of the given answer), system (string or null: the
//          system of the operation that produced the answer), session (string or null: that
//          operation's session id), since / until (UTC datetime or null: answered at or after /
//          before, the answering operation's time, else the answer unit's), error_type (string
//          or null: the latest attribution's), attributed (boolean or null: has a stored
//          attribution or not), prompt_version (string or null: a prompt version's unit id;
//          the stored attribution blames an operation that ran with it), skip (int), limit (int)
MATCH (c:Case {project: $project})
WHERE c.id IS NOT NULL  // seeks the (project, id) key index instead of scanning every project
  AND ($verdict IS NULL OR c.verdict = $verdict)
  AND ($text IS NULL OR toLower(c.question) CONTAINS $text OR EXISTS {
    MATCH (c)-[:ANSWERED_BY]->(given:Unit) WHERE toLower(given.content) CONTAINS $text
  })
  AND ($system IS NULL OR EXISTS {
    MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(o:Operation) WHERE o.system = $system
  })
  AND ($session IS NULL OR EXISTS {
    MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(o:Operation)
    WHERE o.session_id = $session
  })
  AND ($attributed IS NULL OR EXISTS { (c)-[:ATTRIBUTED]->(:Attribution) } = $attributed)
  AND ($error_type IS NULL OR EXISTS {
    MATCH (c)-[:ATTRIBUTED]->(latest:Attribution)
    WITH latest ORDER BY latest.created_at DESC LIMIT 1
    WITH latest WHERE latest.error_type = $error_type
    RETURN latest
  })
  AND ($prompt_version IS NULL OR EXISTS {
    MATCH (c)-[:ATTRIBUTED]->(:Attribution {status: 'attributed'})-[:BLAMES]->(:Operation)
          -[:CONSUMES]->(:Unit {project: $project, id: $prompt_version})
  })
WITH c, COLLECT {
    MATCH (c)-[:ANSWERED_BY]->(a:Unit)
    OPTIONAL MATCH (a)-[:PRODUCED_BY]->(o:Operation)
    RETURN coalesce(o.ts, a.ts) AS t ORDER BY t DESC LIMIT 1
  }[0] AS at
WHERE ($since IS NULL OR at >= $since) AND ($until IS NULL OR at < $until)
WITH c, at
ORDER BY at IS NULL, at DESC, c.id  // DESC alone would put the cases without a time first
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (c)-[:ANSWERED_BY]->(answer:Unit)
OPTIONAL MATCH (answer)-[:PRODUCED_BY]->(op:Operation)
OPTIONAL MATCH (c)-[:ATTRIBUTED]->(a:Attribution)
WITH c, at, answer, op, a
ORDER BY a.created_at DESC
WITH c, at, head(collect(answer)) AS answer, head(collect(op)) AS op, head(collect(a)) AS a
RETURN c.id AS id, c.verdict AS verdict, c.question AS question,
       c.expected_answer AS expected_answer, answer.content AS answer,
       coalesce(op.ts, answer.ts) AS answered_at, op.system AS system,
       op.session_id AS session_id, a.status AS attribution_status, a.error_type AS error_type
ORDER BY at IS NULL, at DESC, id
