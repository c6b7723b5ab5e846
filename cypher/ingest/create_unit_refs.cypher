// Units referenced by id but defined nowhere yet: stored without content until a batch defines them.
// $params: project (string), ids (list of string: ids the graph does not hold)
UNWIND $ids AS id
CREATE (:Unit {project: $project, id: id, defined: false, reaches_memory: false})
