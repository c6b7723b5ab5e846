// Units referenced by id but not defined anywhere yet: stored without content until defined.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
MERGE (u:Unit {project: $project, id: id})
ON CREATE SET u.defined = false
