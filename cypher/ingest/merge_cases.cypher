// Creates cases (the writer sends only those it did not find). A case created by a concurrent
// batch in the meantime is left as it is and returned when it differs.
// $params: project (string),
//          rows (list of {id, question, expected_answer, verdict, attributes (JSON string), fp})
UNWIND $rows AS row
MERGE (c:Case {project: $project, id: row.id})
ON CREATE SET c.question = row.question,
              c.expected_answer = row.expected_answer,
              c.verdict = row.verdict,
              c.attributes = row.attributes,
              c.fp = row.fp
WITH c, row
WHERE c.fp <> row.fp
RETURN c.id AS conflict
