// Failed cases whose answer was held by a memory live at question time that the answer's
// context lacks. Question time: the earliest ts of an operation producing the case's answer
// unit. The answer's lineage (what it depends on, at most 20 relationships back) must hold a
// retrieval operation. A memory (unit of kind memory) is considered when it was carried forward
// from the case's evidence units and was produced before the question. Evidence units, carried
// forward and live are the rules of graph_schema/rules.py, shared with the attribution walk:
// the case's evidence_units, else its stored attribution's evidence; through operations that
// build the memory, from an entry's version only into the same entry, at most 10 operation
// steps; live unless, before the question, an operation of another kind than retrieval,
// response, evaluation consumed it and (for a version of an entry: memory_id set) produced a
// next version or tombstone of that entry. A deleted memory is so never a miss: it is a
// deletion (deleted_then_needed). It reached the context when an
// output of a lineage retrieval contains its content verbatim, when the answer's operation
// consumed it directly, or when a lineage retrieval without any output content consumed it.
// With $needles, the memory must contain (lower-cased) at least $min_answer_coverage percent
// of the case's needles: a cheap superset of the service's rule, which then keeps the memories
// carrying at least that percentage of the expected answer's content words while the lineage
// retrievals' outputs do not (rows carry the expected answer, the memory's content and those
// outputs' texts for it). In case id, memory id order.
// Paged by a cursor (service/audits/cursor.py): the page covers the failed cases from
// $first_case to $last_case (a window read by audit_inputs/failed_answers_from), and $skip skips
// the candidates of $first_case an earlier page already read (ids sort before any later case's).
// $params: project (string), first_case (string), last_case (string: the window of case ids),
//          skip (int: candidates of first_case to skip), limit (int: candidates to read),
//          min_answer_coverage (int: percent, 0-100),
//          needles (map: failed case id -> list of word stems of its expected answer; or null
//                   to report every structural candidate)
// Plan: failed cases are walked in id order from the (project, id) key index (the ORDER BY
// names c.project first, a constant, so the planner sees the index's order) and each case's rows
// are found inside CALL (c): a page costs the cases it covers, not the project. Within a case,
// the memories its evidence flowed into and that carry the needles come first; the answer's
// lineage is walked only when one does.
MATCH (c:Case {project: $project})
WHERE c.id >= $first_case AND c.id <= $last_case AND c.verdict = 'failed'
WITH c
ORDER BY c.project, c.id
CALL (c) {
  MATCH (c)-[:ANSWERED_BY]->(a:Unit)-[:PRODUCED_BY]->(r:Operation)
  WITH c, a, min(r.ts) AS asked, collect(r) AS answering
  WITH c, a, asked, answering, coalesce($needles[c.id], []) AS needles
  // The memories that could be rows first, the answer's lineage only for a case that has one:
  // walking a lineage reads hundreds of nodes, and on the benchmark graph half the failed cases
  // have no evidence or no memory carrying the needles.
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
  WITH c, a, asked, answering, needles, v, collect(DISTINCT e.id) AS evidence
  WHERE $needles IS NULL
     OR size([s IN needles WHERE toLower(v.content) CONTAINS s]) * 100
        >= $min_answer_coverage * size(needles)
  WITH c, a, asked, answering, collect({v: v, evidence: evidence}) AS found
  CALL (a) {
    MATCH (a)-[:PRODUCED_BY|CONSUMES*0..20]->(o)
    WITH DISTINCT o
    WHERE o:Operation AND o.kind = 'retrieval'
    RETURN collect(o) AS retrievals,
           [o IN collect(o) WHERE NOT EXISTS {
             MATCH (o)-[:PRODUCES]->(y:Unit) WHERE y.content IS NOT NULL
           }] AS textless,
           COLLECT {
             MATCH (o)-[:PRODUCES]->(y:Unit) WHERE y.content IS NOT NULL RETURN y.content
           } AS texts
  }
  WITH c, asked, answering, retrievals, textless, texts, found
  WHERE size(retrievals) > 0
  UNWIND found AS f
  WITH c, asked, answering, retrievals, textless, texts, f.v AS v, f.evidence AS evidence
  WHERE NOT any(text IN texts WHERE text CONTAINS v.content)
    AND NOT EXISTS {
      MATCH (o:Operation)-[:CONSUMES]->(v)
      WHERE o IN answering OR o IN textless
    }
  OPTIONAL MATCH (v)-[:PRODUCED_BY]->(p:Operation)
  WITH c, asked, retrievals, texts, v, evidence, coalesce(min(p.ts), v.ts) AS born
  WHERE born < asked
    // rule: live at question time (graph_schema/rules.py)
    AND NOT EXISTS {
      MATCH (o:Operation)-[:CONSUMES]->(v)
      WHERE o.ts < asked AND NOT coalesce(o.kind, '') IN ['retrieval', 'response', 'evaluation']
        AND (v.memory_id IS NULL OR EXISTS {
          MATCH (o)-[:PRODUCES]->(w:Unit)
          WHERE w.memory_id = v.memory_id AND w.kind IN [v.kind, 'tombstone']
        })
    }
    // end rule
  RETURN v, born, asked, evidence, retrievals, texts
}
RETURN c.id AS case,
       v.id AS memory,
       v.memory_id AS memory_id,
       born AS produced_at,
       asked AS answered_at,
       evidence,
       [o IN retrievals | o.id] AS retrievals,
       [o IN retrievals WHERE (o)-[:CONSUMES]->(v) | o.id] AS read_by,
       c.expected_answer AS _expected_answer,
       v.content AS _content,
       texts AS _texts
ORDER BY c.project, c.id, v.id
SKIP $skip
LIMIT $limit
