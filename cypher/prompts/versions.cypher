// Prompt versions of a project (units of kind prompt whose id starts with $prefix: "prompt:" for
// every prompt, "prompt:<name>@" for one), each with how often it was used and how many stored
// attributions blame an operation that ran with it, by error type. Versions are told apart from
// other prompt units by their attributes (prompt_name), which the caller parses.
// $params: project (string), prefix (string), with_text (boolean: return the template text)
MATCH (u:Unit {project: $project, kind: 'prompt'})
WHERE u.id STARTS WITH $prefix
CALL (u) {
  OPTIONAL MATCH (o:Operation)-[:CONSUMES]->(u)
  WHERE o.kind <> 'optimization'
  RETURN count(o) AS operations, min(o.ts) AS first_consumed
}
CALL (u) {
  OPTIONAL MATCH (p:Operation)-[:PRODUCES]->(u)
  OPTIONAL MATCH (p)-[:CONSUMES]->(parent:Unit {kind: 'prompt'})
  WITH p, parent ORDER BY p.ts
  RETURN min(p.ts) AS produced_at, collect(p.id)[0] AS produced_by,
         collect(parent.id)[0] AS parent, collect(p.attributes)[0] AS produced_attributes
}
CALL (u) {
  OPTIONAL MATCH (u)<-[:CONSUMES]-(:Operation)<-[:BLAMES]-(a:Attribution {status: 'attributed'})
  WITH a.error_type AS error_type, count(DISTINCT a.case_id) AS n
  WHERE error_type IS NOT NULL
  RETURN collect([error_type, n]) AS failures
}
RETURN u.id AS id,
       CASE WHEN $with_text THEN u.content ELSE null END AS text,
       u.attributes AS attributes,
       operations,
       first_consumed,
       produced_at,
       produced_by,
       parent,
       produced_attributes,
       failures
ORDER BY u.id
