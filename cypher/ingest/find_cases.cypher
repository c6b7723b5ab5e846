// Fingerprints of the cases of a batch that already exist.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MATCH (c:Case {project: $project, id: id})
RETURN c.id AS id, c.fp AS fp
