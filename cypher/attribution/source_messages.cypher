// The source messages of a project, the pool the attribution searches for evidence when a case
// names none.
// $params: project (string), limit (int)
MATCH (u:Unit {project: $project, kind: 'message'})
RETURN u.id AS id, u.content AS content
LIMIT $limit
