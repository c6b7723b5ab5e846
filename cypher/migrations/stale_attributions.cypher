// Deletes up to $batch attributions, in any project of the store, that do not fit their case's
// verdict: a blame (attributed, inconclusive, unanswerable) of a case no longer failed, or a
// not_failed of a case failed since. An earlier version kept them when a verdict changed
// (verdicts/record_verdict now deletes them then), and the reports counted them. Run at
// start-up, after the schema, until it deletes none: a store written by this version has none,
// and the label scan that finds none is the whole cost.
// $params: batch (int)
MATCH (c:Case)-[:ATTRIBUTED]->(a:Attribution)
WHERE (c.verdict = 'failed') <> (a.status <> 'not_failed')
WITH a
LIMIT $batch
DETACH DELETE a
RETURN count(*) AS changed
