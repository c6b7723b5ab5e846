// Records a verdict given after the answer on an existing case. The case's fingerprint (fp) is
// left as ingest wrote it, so the original case sent again is still an identical re-send.
// A verdict or expected answer that differs from the stored one deletes the case's attribution:
// it was made for the old ones (an attribution of a failed case now passed would still count as
// an attributed failure, and come back as current were the case failed again), so the case
// waits for a new one. The same verdict sent again keeps it.
// $params: project (string), case_id (string), verdict (string: failed, passed or unknown),
//          expected_answer (string or null: keep the case's), attributes (JSON string or null:
//          the case's attributes with the verdict's note merged in)
MATCH (c:Case {project: $project, id: $case_id})
WITH c, c.verdict <> $verdict
        OR coalesce($expected_answer <> c.expected_answer, false) AS changed
CALL (c, changed) {
  OPTIONAL MATCH (c)-[:ATTRIBUTED]->(old:Attribution)
  WHERE changed
  DETACH DELETE old
}
SET c.verdict = $verdict,
    c.expected_answer = coalesce($expected_answer, c.expected_answer),
    c.attributes = $attributes
RETURN c.id AS id
