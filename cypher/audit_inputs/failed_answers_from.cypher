// The next failed cases of a project in id order, from a cursor's case (inclusive), with their
// expected answers: the window of cases one page of a cursor-paged audit covers
// (deleted_then_needed, retrieval_misses). The (project, id) key index is sought from $start and
// read in its order, so a page costs the cases it covers, not the project.
// $params: project (string), start (string: the first case id to consider; '' for the start),
//          cases (int: at most this many failed cases)
MATCH (c:Case {project: $project})
WHERE c.id >= $start AND c.verdict = 'failed'
WITH c
ORDER BY c.project, c.id
LIMIT $cases
RETURN c.id AS id, c.expected_answer AS expected_answer
