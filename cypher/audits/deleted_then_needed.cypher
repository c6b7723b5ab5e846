// Memories deleted before a failed case that needed them. An entry (the units sharing a
// memory_id) was deleted by an operation that produced a tombstone with its memory_id, or by an
// operation of kind deletion that consumed one of its versions. A failed case needed it when a
// version of the entry (kind memory) produced at or before the deletion was carried forward from
// one of the case's evidence units, and the deletion ran before the case's answer (the earliest
// operation producing its answer unit). Evidence units and carried forward are the rules of
// graph_schema/rules.py (the case's evidence_units, else its stored attribution's evidence;
// through operations that build the memory, from an entry's version only into the same entry,
// at most 10 operation steps), shared with the attribution walk. Cases without evidence or
// without an answer are never reported.
// With $needles, a version must contain (lower-cased) at least $min_answer_coverage percent of
// the case's needles: a cheap superset of the service's rule, which then keeps the versions
// carrying at least that percentage of the expected answer's content words, and the rows left
// with a version (rows carry the expected answer and the versions' contents for it).
// In case id, memory_id, deletion time order.
// Paged by a cursor (service/audits/cursor.py): the page covers the failed cases from
// $first_case to $last_case (a window read by audit_inputs/failed_answers_from), and $skip skips
// the candidates of $first_case an earlier page already read (ids sort before any later case's).
// $params: project (string), first_case (string), last_case (string: the window of case ids),
//          skip (int: candidates of first_case to skip), limit (int: candidates to read),
//          min_answer_coverage (int: percent, 0-100),
//          needles (map: failed case id -> list of word stems of its expected answer; or null
//                   to report every structural candidate)
// Plan: failed cases are walked in id order from the (project, id) key index (the ORDER BY
// names c.project first, a constant, so the planner sees the index's order), and everything
// else is found per case inside CALL (c): the memory versions its evidence was carried forward
// into (a shortest-path search from each evidence unit, which reaches a unit once, not once per
// path), then the deletions of their entries, looked up once per entry. A page thus costs the
// cases it covers, not the project. (The evidence of a row lists, version by version in id
// order, each version's evidence unit ids in id order.)
MATCH (c:Case {project: $project})
WHERE c.id >= $first_case AND c.id <= $last_case AND c.verdict = 'failed'
WITH c
ORDER BY c.project, c.id
CALL (c) {
  MATCH (c)-[:ANSWERED_BY]->(:Unit)-[:PRODUCED_BY]->(r:Operation)
  WITH min(r.ts) AS asked
  WITH c, asked, coalesce($needles[c.id], []) AS needles
  // rule: evidence units (graph_schema/rules.py)
  CALL (c) {
    MATCH (c)-[:EVIDENCE]->(e:Unit)
    RETURN e
    UNION
    MATCH (c)-[:ATTRIBUTED]->(stored:Attribution)
    WHERE NOT EXISTS { (c)-[:EVIDENCE]->(:Unit) }
    UNWIND coalesce(stored.evidence, []) AS found
    MATCH (e:Unit {project: $project, id: found})
    RETURN e
  }
  // end rule
  // rule: carried forward (graph_schema/rules.py)
  CALL (e) {
    MATCH ANY SHORTEST (e) ((u:Unit)<-[:CONSUMES]-(o:Operation)<-[:PRODUCED_BY]-(w:Unit)
      WHERE NOT coalesce(o.kind, '') IN ['retrieval', 'response', 'evaluation']
        AND (u.memory_id IS NULL OR w.memory_id = u.memory_id)){0,10} (v:Unit)
    WHERE v.kind = 'memory'
    RETURN DISTINCT v
  }
  // end rule
  WITH asked, e, v, needles
  WHERE v.memory_id IS NOT NULL
    AND ($needles IS NULL
     OR size([s IN needles WHERE toLower(v.content) CONTAINS s]) * 100
        >= $min_answer_coverage * size(needles))
  // When a version was made, only for those that carry the needles (1% of the versions the
  // evidence reaches on the benchmark graph).
  CALL (v) {
    OPTIONAL MATCH (v)-[:PRODUCED_BY]->(p:Operation)
    WITH min(p.ts) AS first
    RETURN coalesce(first, v.ts) AS born
  }
  WITH asked, v.memory_id AS memory_id, collect({v: v, e: e, born: born}) AS found
  // Deletions are looked up once per entry, not once per version.
  CALL (memory_id) {
    MATCH (t:Unit {project: $project, memory_id: memory_id})-[:PRODUCED_BY]->(d:Operation)
    WHERE t.kind = 'tombstone'
    RETURN d
    UNION
    MATCH (w:Unit {project: $project, memory_id: memory_id})<-[:CONSUMES]-(d:Operation)
    WHERE d.kind = 'deletion'
    RETURN d
  }
  WITH asked, memory_id, d, found
  WHERE d.ts < asked
  UNWIND found AS f
  WITH asked, memory_id, d, f.v AS v, f.e AS e
  WHERE f.born IS NULL OR f.born <= d.ts
  ORDER BY v.id, e.id
  WITH asked, memory_id, d, v, collect(e.id) AS evidence
  ORDER BY v.id
  RETURN asked, memory_id, d,
         collect({id: v.id, content: v.content}) AS versions,
         reduce(all = [], ids IN collect(evidence) | all + [i IN ids WHERE NOT i IN all]) AS evidence
}
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
ORDER BY c.project, c.id, memory_id, d.ts, d.id
SKIP $skip
LIMIT $limit
