// Deletes a chunk of cases with their attributions, and the units they named (answer,
// evidence) that nothing else refers to afterwards (no orphan is left behind); units an
// operation or another case still refers to are kept. Deleting a case changes no
// reaches_memory mark: reach runs through operations only. A unit is checked under its write
// lock, as in delete_operations.cypher (a batch linking it meanwhile keeps it).
// $params: project (string), ids (list of case ids, at most a few thousand)
UNWIND $ids AS case_id
MATCH (c:Case {project: $project, id: case_id})
OPTIONAL MATCH (c)-[:ATTRIBUTED]->(a:Attribution)
WITH c, collect(a) AS stale
OPTIONAL MATCH (c)-[:ANSWERED_BY|EVIDENCE]->(u:Unit)
WITH c, stale, collect(u) AS named
FOREACH (a IN stale | DETACH DELETE a)
DETACH DELETE c
WITH count(c) AS cases, sum(size(stale)) AS attributions,
     reduce(all = [], units IN collect(named) | all + units) AS named
CALL (named) {
  UNWIND named AS u
  WITH DISTINCT u
  SET u._LOCK_ = true REMOVE u._LOCK_
  WITH u WHERE NOT EXISTS { (u)--() }
  DELETE u
  RETURN count(u) AS units
}
RETURN cases, attributions, units
