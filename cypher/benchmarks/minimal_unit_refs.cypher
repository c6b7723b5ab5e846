// The minimal graph: units referenced before any batch defined them (a chain's seeds), by id only.
// $params: project (string), ids (list of string)
UNWIND $ids AS id
CREATE (:MinimalUnit {project: $project, id: id})
