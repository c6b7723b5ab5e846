// Fingerprints of the operations of a batch that already exist.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MATCH (o:Operation {project: $project, id: id})
RETURN o.id AS id, o.fp AS fp
