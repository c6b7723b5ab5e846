// Memories deleted before a failed case that needed them. An entry (the units sharing a
// memory_id) was deleted by an operation that produced a tombstone with its memory_id, or by an
// operation of kind deletion that consumed one of its versions. A failed case needed it when one
// of the case's evidence units is among the ancestors (at most 20 relationships back, i.e. 10
// operation steps) of a version of the entry (kind memory) produced at or before the deletion,
// and the deletion ran before the case's answer (the earliest operation producing its answer
// unit). Cases without evidence units or without an answer are never reported.
// With $needles, a version must contain (lower-cased) at least $min_answer_coverage percent of
// the case's needles: a cheap superset of the service's rule, which then keeps the versions
// carrying at least that percentage of the expected answer's content words, and the rows left
// with a version (rows carry the expected answer and the versions' contents for it).
// In case id, memory_id, deletion time order.
// $params: project (string), skip (int: candidates to skip), limit (int: candidates to read),
//          min_answer_coverage (int: percent, 0-100),
//          needles (map: failed case id -> list of word stems of its expected answer; or null
//                   to report every structural candidate)
CALL () {
  MATCH (t:Unit {project: $project, kind: 'tombstone'})-[:PRODUCED_BY]->(d:Operation)
  WHERE t.memory_id IS NOT NULL
  RETURN t.memory_id AS memory_id, d
  UNION
  MATCH (d:Operation {project: $project, kind: 'deletion'})-[:CONSUMES]->(w:Unit)
  WHERE w.memory_id IS NOT NULL
  RETURN w.memory_id AS memory_id, d
}
MATCH (v:Unit {project: $project, memory_id: memory_id})
WHERE v.kind = 'memory'
OPTIONAL MATCH (v)-[:PRODUCED_BY]->(p:Operation)
WITH memory_id, d, v, coalesce(min(p.ts), v.ts) AS born
WHERE born IS NULL OR born <= d.ts
CALL (v) {
  MATCH (v)-[:PRODUCED_BY|CONSUMES*0..20]->(e)
  WITH DISTINCT e
  MATCH (e)<-[:EVIDENCE]-(c:Case)
  WHERE c.verdict = 'failed'
  RETURN c, e
}
WITH memory_id, d, v, c, e
WITH memory_id, d, v, c, e, coalesce($needles[c.id], []) AS needles
WHERE $needles IS NULL
   OR size([s IN needles WHERE toLower(v.content) CONTAINS s]) * 100
      >= $min_answer_coverage * size(needles)
MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(r:Operation)
WITH memory_id, d, v, c, e, min(r.ts) AS asked
WHERE d.ts < asked
WITH c, asked, memory_id, d, v, collect(e.id) AS evidence
ORDER BY v.id
WITH c, asked, memory_id, d,
     collect({id: v.id, content: v.content}) AS versions,
     reduce(all = [], ids IN collect(evidence) | all + [i IN ids WHERE NOT i IN all]) AS evidence
RETURN c.id AS case,
       memory_id,
       head(COLLECT {
         MATCH (d)-[:CONSUMES]->(w:Unit {memory_id: memory_id}) RETURN w.id AS id ORDER BY id
       }) AS deleted_version,
       d.id AS deletion,
       d.kind AS deletion_kind,
       d.ts AS deleted_at,
       asked AS answered_at,
       evidence,
       c.expected_answer AS _expected_answer,
       versions AS _versions
ORDER BY c.id, memory_id, d.ts, d.id
SKIP $skip
LIMIT $limit
