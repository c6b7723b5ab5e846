// Records a verdict given after the answer on an existing case. The case's fingerprint (fp) is
// left as ingest wrote it, so the original case sent again is still an identical re-send.
// $params: project (string), case_id (string), verdict (string: failed, passed or unknown),
//          expected_answer (string or null: keep the case's), attributes (JSON string or null:
//          the case's attributes with the verdict's note merged in)
MATCH (c:Case {project: $project, id: $case_id})
SET c.verdict = $verdict,
    c.expected_answer = coalesce($expected_answer, c.expected_answer),
    c.attributes = $attributes
RETURN c.id AS id
