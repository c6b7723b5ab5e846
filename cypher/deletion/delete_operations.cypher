// Deletes a chunk of operations with everything that only they explain: the cases whose
// answer one of them produced (and those cases' attributions), the attributions of other
// cases that blame one of them (stale once it is gone: re-attribute), and the units they read
// or wrote that nothing else refers to afterwards (no orphan is left behind). Units another
// operation or case still refers to are kept; so are the answer and evidence units of the
// deleted cases when something else still refers to them.
// Also returns the ids of the units the operations consumed (deletion/recheck_reach sets their
// reaches_memory again).
// A unit is checked for what still refers to it only once this transaction holds its write lock
// (SET then REMOVE of _LOCK_, Neo4j's way to lock a node from Cypher): a batch that linked it
// meanwhile has committed by then and the unit is kept, instead of a DELETE that waited for that
// batch failing on "still has relationships" (docs/cli.md, "Deleting data while writing").
// $params: project (string), ids (list of operation ids, at most a few thousand)
UNWIND $ids AS op_id
MATCH (o:Operation {project: $project, id: op_id})
WITH collect(o) AS ops
CALL (ops) {
  UNWIND ops AS o
  MATCH (o)-[:PRODUCES]->(:Unit)<-[:ANSWERED_BY]-(c:Case)
  WITH DISTINCT c
  OPTIONAL MATCH (c)-[:ATTRIBUTED]->(a:Attribution)
  WITH c, collect(a) AS stale
  OPTIONAL MATCH (c)-[:ANSWERED_BY|EVIDENCE]->(u:Unit)
  WITH c, stale, collect(u) AS named
  FOREACH (a IN stale | DETACH DELETE a)
  DETACH DELETE c
  RETURN count(c) AS cases, sum(size(stale)) AS case_attributions,
         reduce(all = [], units IN collect(named) | all + units) AS case_units
}
CALL (ops) {
  UNWIND ops AS o
  MATCH (a:Attribution)-[:BLAMES]->(o)
  WITH DISTINCT a
  DETACH DELETE a
  RETURN count(a) AS blamed
}
CALL (ops) {
  UNWIND ops AS o
  MATCH (o)-[r:CONSUMES|PRODUCES]->(u:Unit)
  RETURN collect(DISTINCT u) AS touched,
         collect(DISTINCT CASE WHEN r:CONSUMES THEN u.id END) AS consumed
}
CALL (ops) {
  UNWIND ops AS o
  DETACH DELETE o
  RETURN count(o) AS operations
}
CALL (touched, case_units) {
  UNWIND touched + case_units AS u
  WITH DISTINCT u
  SET u._LOCK_ = true REMOVE u._LOCK_
  WITH u WHERE NOT EXISTS { (u)--() }
  DELETE u
  RETURN count(u) AS units
}
RETURN operations, units, cases, case_attributions + blamed AS attributions, consumed
