// The expected answers of a project's failed cases: the service turns each into the word stems
// the answer-overlap audits pre-filter their candidate memories with.
// $params: project (string)
MATCH (c:Case {project: $project, verdict: 'failed'})
RETURN c.id AS id, c.expected_answer AS expected_answer
