// Fingerprints of the units of a batch that already exist. A unit known only by id has fp null.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MATCH (u:Unit {project: $project, id: id})
RETURN u.id AS id, u.fp AS fp
