// A page of a project's cases in id order matching every filter given, each with what a person
// needs to pick one: the question, the expected and the given answer, when and by which system
// and session it was answered, and the latest stored attribution's status and error type.
// A filter left null does not apply and is not evaluated: each is an EXISTS, which the planner
// runs only when the `$x IS NULL` before it is false (a COLLECT subquery would run for every
// case, needed or not: twice the time of a text search on 100,000 cases). In id order the (project, id) index
// gives the cases already sorted, so a page stops reading once it is full; newest first is
// cases/list_cases_newest, with the same filters (tests/cases/test_case_search.py runs every
// filter in both orders and compares them).
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
  AND ($since IS NULL AND $until IS NULL OR EXISTS {
    MATCH (c)-[:ANSWERED_BY]->(a:Unit)
    OPTIONAL MATCH (a)-[:PRODUCED_BY]->(o:Operation)
    WITH coalesce(o.ts, a.ts) AS t
    WHERE ($since IS NULL OR t >= $since) AND ($until IS NULL OR t < $until)
    RETURN t
  })
WITH c
ORDER BY c.project, c.id  // the constant first: how the planner sees the index's order
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
